import Foundation
import LedgerEventStore
import LedgerIdentity

extension AccountService {
    /// Payload fields an export leaves out: secrets' hashes are not the person's data, and in
    /// a leaked export they would only help an attacker.
    static let exportRedactedFields: Set<String> = ["password_hash", "code_hmac", "cooldown_keys"]

    /// The account's own history, decrypted (GDPR access and portability), for an account
    /// that proved its address: a verified email, or a phone number (verified by its code).
    public func export(_ accountID: UUID) async throws -> [RecordedEvent] {
        let state = try await repository.load(accountID)
        guard state.emailVerified || state.phone != nil else {
            throw IdentityError(.exportNotAllowed, "Verify your email address before exporting your data.")
        }
        return try await repository.history(accountID)
    }

    /// Whether a payload field is left out of an export.
    public static func isRedactedInExport(_ field: String) -> Bool {
        exportRedactedFields.contains(field) || field.hasSuffix("_sha256")
    }
}
