import Foundation
import LedgerEvents
import LedgerIdentity

extension AccountService {
    /// Payload fields an export (and the feed) leaves out: secrets and their hashes are not the
    /// person's data, and in a leaked export they would only help an attacker.
    static let exportRedactedFields: Set<String> = [
        "password_hash", "code_hmac", "cooldown_keys", "refresh_token", "totp_secret", "link_token", "previous_email_key", "email_key",
        // A passkey's identifiers: the user handle and credential id would map any passkey seen
        // on a device to its account, and no consumer needs the key (the fold reads the sealed event).
        "credential_id", "public_key", "user_handle",
    ]

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
        isRedactedInExport(utf8: ArraySlice(field.utf8))
    }

    /// The desk's notes in a support call's record (`admin.*`): who acted, with which key, and
    /// why. Auditors read them (`GET /accounts/{id}/events`); the person's export, the feed and
    /// webhooks leave them out, so a stolen session or an over-broad `events:read` key learns
    /// neither a staff member's name nor how a caller proved who they were (docs/support.md).
    static let staffNoteFields: Set<String> = ["operator", "reason", "key_id", "staff_id", "email"]
    private static let staffNoteFieldNames = staffNoteFields.map { Array($0.utf8) }

    /// Whether events of `type` carry the desk's notes: a support call's record, or a staff
    /// member's own events (their address).
    public static func carriesStaffNotes(_ type: String) -> Bool { type.hasPrefix("admin.") || type.hasPrefix("staff.") }

    /// Whether a field of an `admin.*` event is left out for everyone but auditors: a secret's
    /// hash, or one of the desk's notes.
    public static func isRedactedFromStaffRecord(_ field: String) -> Bool {
        isRedactedFromStaffRecord(utf8: ArraySlice(field.utf8))
    }

    static func isRedactedFromStaffRecord(utf8 name: ArraySlice<UInt8>) -> Bool {
        isRedactedInExport(utf8: name) || staffNoteFieldNames.contains { $0.count == name.count && $0.elementsEqual(name) }
    }

    private static let redactedFieldNames = exportRedactedFields.map { Array($0.utf8) }
    private static let redactedFieldSuffix = Array("_sha256".utf8)

    /// The same rule on a field name's bytes, for the event feed, which checks every field of
    /// every payload it renders and so makes no `String` of the name.
    static func isRedactedInExport(utf8 name: ArraySlice<UInt8>) -> Bool {
        name.count >= redactedFieldSuffix.count && name.suffix(redactedFieldSuffix.count).elementsEqual(redactedFieldSuffix)
            || redactedFieldNames.contains { $0.count == name.count && $0.elementsEqual(name) }
    }
}
