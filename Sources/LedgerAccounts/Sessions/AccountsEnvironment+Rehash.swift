import Foundation
import LedgerIdentity

extension AccountsEnvironment {
    /// After a right password (a sign-in or a password re-auth): a hash weaker than today's cost,
    /// or another system's (an imported account's, `password.rehashed`), is replaced by the
    /// service's scrypt of the same password. Returns the hash the account holds now, which the
    /// caller's proof names.
    ///
    /// Best effort, at a new password's priority: a flood that fills that share must not turn
    /// a right password into a 503; the next sign-in rehashes instead.
    func rehashIfDue(_ accountID: UUID, checked storedHash: String, password: String) async throws -> String {
        guard hasher.needsRehash(storedHash), hasher.acceptsNewPasswords, let rehash = try? await hasher.hash(password) else {
            return storedHash
        }
        let (_, events) = try await repository.execute(accountID) { _ in
            .rehashPassword(replacing: storedHash, newPasswordHash: rehash)
        }
        if !events.isEmpty { return rehash }
        if let current = try await repository.load(accountID).passwordHash, current != storedHash,
            try await hasher.verify(password, against: current)
        {
            // Another sign-in's rehash of this same password came first: that hash is the one proven.
            return current
        }
        return storedHash
    }
}
