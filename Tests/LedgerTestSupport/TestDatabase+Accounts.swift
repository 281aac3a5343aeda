import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity

extension TestDatabase {
    /// The account use cases on `store` as `serve` wires them (the repository, and the throttle
    /// and limits counting in this database), with a cheap scrypt.
    /// - Parameter clock: the store's when it is not this database's.
    public func accountsEnvironment(
        _ store: EventStore, policies: Policies = .standard, clock: (any LedgerClock)? = nil, logN: Int = 4
    ) throws -> AccountsEnvironment {
        .postgres(
            store: store, clock: clock ?? self.clock, policies: policies, retention: .development,
            hasher: try PasswordHasher(parameters: Scrypt(logN: logN)))
    }

    /// Codes by text on `store`, with a fixed code key.
    public func otpService(_ store: EventStore, environment: AccountsEnvironment) -> OTPService {
        OTPService(
            otps: PostgresOTPRepository(
                accounts: PostgresAccountRepository(
                    store: store, clock: environment.clock, policies: environment.policies, retention: environment.retention)),
            environment: environment, codeKey: Array(repeating: 3, count: 32))
    }

    /// The account repository on `store`, as the services' environment holds it.
    public func accountRepository(_ store: EventStore, policies: Policies = .standard) -> PostgresAccountRepository {
        PostgresAccountRepository(store: store, clock: clock, policies: policies, retention: .development)
    }
}
