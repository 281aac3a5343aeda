import Foundation
import LedgerIdentity

/// Operators disabling and enabling accounts (`accounts:admin`).
extension AccountService {
    /// Disables the account (an operator, `accounts:admin`): every session ends, and sign-ins
    /// answer `account_disabled` until it is enabled. Returns the account after.
    public func disable(_ accountID: UUID, reason: String) async throws -> AccountState {
        try await repository.execute(accountID) { _ in .disableAccount(reason: reason) }.0
    }

    /// Enables a disabled account again.
    public func enable(_ accountID: UUID) async throws -> AccountState {
        try await repository.execute(accountID) { _ in .enableAccount }.0
    }
}
