import Foundation

/// What the send limits of one code request read, as the repository found it under the
/// number's lock: the facts only, sized by the policy (each limit's newest sends inside its
/// window, the send at a ceiling). `OTPPolicy.admitSend` decides on them.
public struct OTPSendHistory: Sendable, Equatable {
    /// This number's sends for this purpose within the resend window.
    public var phone: [Date] = []
    /// The client address's sends, and the signed-in account's, within the cap window.
    public var address: [Date] = []
    public var account: [Date] = []
    /// The send that fills the client's IPv6 /48's cap window, when the window is full.
    public var networkFull: Date?
    /// The send that fills the destination country's hourly window, when it is full.
    public var regionFull: Date?
    /// The number's wrong codes of the last day, all purposes and requests together.
    public var failures: [OTPFailures] = []

    public init() {}
}

/// Wrong codes one request took, and when the request was made (it leaves the daily window then).
public struct OTPFailures: Sendable, Equatable {
    public var requestedAt: Date
    public var count: Int

    public init(requestedAt: Date, count: Int) {
        self.requestedAt = requestedAt
        self.count = count
    }
}
