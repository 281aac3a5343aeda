import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto

extension AccountsEnvironment {
    /// The use cases over `repository` as tests run them: the repository's policies, counters
    /// of this process only, and a cheap scrypt (the cost is not what these tests check).
    public static func testing(
        _ repository: any AccountRepository, clock: any LedgerClock, logN: Int = 4, retention: Retention = .development,
        devices: DeviceTokens = .development
    ) throws -> AccountsEnvironment {
        AccountsEnvironment(
            repository: repository, clock: clock, hasher: try PasswordHasher(parameters: Scrypt(logN: logN)),
            counters: InMemoryAttemptCounters(), retention: retention, devices: devices)
    }
}
