import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity

extension AccountsEnvironment {
    /// The use cases on `store`: its account repository, with the throttle and the limits
    /// counting in its database (shared by every instance).
    public static func postgres(
        store: EventStore, clock: any LedgerClock, policies: Policies, retention: Retention, hasher: PasswordHasher,
        devices: DeviceTokens = .development, linkBaseURL: String = "https://321.fit"
    ) -> AccountsEnvironment {
        AccountsEnvironment(
            repository: PostgresAccountRepository(store: store, clock: clock, policies: policies, retention: retention),
            clock: clock, hasher: hasher, counters: PostgresAttemptCounters(client: store.client), retention: retention,
            devices: devices, linkBaseURL: linkBaseURL)
    }
}
