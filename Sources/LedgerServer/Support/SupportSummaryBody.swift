import Foundation
import LedgerAccounts
import LedgerIdentity

/// The support desk's view of an account (`GET /admin/accounts/{id}`), `null` where not set; a
/// purged account's shows its status and ids, nothing personal.
struct SupportSummaryBody: JSONObjectBody {
    let summary: SupportSummary
    init(_ summary: SupportSummary) { self.summary = summary }

    var fields: [String: JSONValue] {
        let state = summary.state
        return [
            "account_id": .string(state.accountID.lowercased),
            "user_id": .string(PublicUserID(accountID: state.accountID).description),
            "status": .string(summary.status.rawValue),
            "created_at": JSONValue(timestamp: state.createdAt), "last_sign_in_at": JSONValue(timestamp: summary.lastSignInAt),
            "display_name": JSONValue(state.displayName), "handle": JSONValue(state.handle),
            "email": JSONValue(state.email), "email_verified": .bool(state.emailVerified), "has_password": .bool(state.hasPassword),
            "phone": JSONValue(state.phone),
            "apple_linked": .bool(state.providerSubjects[.apple] != nil), "google_linked": .bool(state.providerSubjects[.google] != nil),
            "passkeys": .array(
                summary.passkeys.map { passkey in
                    .object([
                        "id": .string(passkey.id.lowercased), "name": .string(passkey.name),
                        "created_at": JSONValue(timestamp: passkey.createdAt), "last_used_at": JSONValue(timestamp: passkey.lastUsedAt),
                    ])
                }),
            "two_factor": .bool(state.isTOTPEnabled),
            "recovery_codes_left": .int(Int64(state.isTOTPEnabled ? state.recoveryCodeHashes.count : 0)),
            "sessions": .int(Int64(summary.liveSessions.count)),
            "holds": .array(
                summary.holds.map { hold in
                    .object([
                        "ref": .string(hold.ref), "kind": .string(hold.kind.rawValue), "title": JSONValue(hold.title),
                        "starts_at": JSONValue(timestamp: hold.startsAt), "releases_at": JSONValue(timestamp: hold.releasesAt),
                    ])
                }),
            "imported_from": JSONValue(state.importedFrom),
            "disabled_at": JSONValue(timestamp: state.disabledAt), "disabled_reason": JSONValue(state.disabledReason),
            "deleted_at": JSONValue(timestamp: state.deletedAt), "purge_after": JSONValue(timestamp: state.purgeAfter),
        ]
    }

    /// A session as `/me/sessions` shows it (`current` is never true here: support has none).
    static func session(_ session: AccountState.Session) -> JSONValue {
        .object([
            "id": .string(session.id.lowercased), "created_at": .string(RFC3339.format(session.createdAt)),
            "last_used_at": .string(RFC3339.format(session.lastUsedAt)), "method": .string(session.method),
            "device": JSONValue(session.device), "current": .bool(false),
        ])
    }
}
