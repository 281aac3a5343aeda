import Foundation
import LedgerServer
import LedgerWorkers

extension LedgerConfiguration {
    /// The retention sweep these settings give.
    public var retentionPolicy: RetentionSweep.Policy {
        var policy = RetentionSweep.Policy()
        policy.throttleRows = TimeInterval(throttleRetentionSeconds)
        policy.otpRequests = TimeInterval(otpRetentionSeconds)
        policy.outboxMessages = TimeInterval(outboxRetentionSeconds)
        policy.emailLinks = TimeInterval(emailLinkRetentionSeconds)
        return policy
    }
}
