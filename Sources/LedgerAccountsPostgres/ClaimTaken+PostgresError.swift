import LedgerAccounts
import LedgerPostgres

extension ClaimTaken {
    /// A unique violation of the `accounts` projection as the claim it guards; other errors as they are.
    @Sendable static func translate(_ error: PostgresError) -> any Error {
        error.code == .uniqueViolation ? ClaimTaken(constraint: error.constraint) : error
    }
}
