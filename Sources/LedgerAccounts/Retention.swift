import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// How long a deleted account lingers (`LEDGER_PURGE_AFTER_SECONDS`) and how long its
/// identifiers may not register again (`LEDGER_SIGNUP_COOLDOWN_SECONDS`), and the key the
/// cooldown list hashes identifiers with.
public struct Retention: Sendable {
    public var purgeDelay: TimeInterval
    public var cooldown: TimeInterval
    /// HMAC key for the cooldown list (derived from the master key in production).
    let cooldownKey: [UInt8]

    public init(purgeDelay: TimeInterval = 2_592_000, cooldown: TimeInterval = 604_800, cooldownKey: [UInt8]) {
        self.purgeDelay = purgeDelay
        self.cooldown = cooldown
        self.cooldownKey = cooldownKey
    }

    /// An identifier a deleted account held.
    public enum Identifier: Sendable {
        case email(String), phone(String), provider(IdentityProvider, String)

        var text: String {
            switch self {
            case .email(let normalized): return "email:" + normalized
            case .phone(let e164): return "phone:" + e164
            case .provider(let provider, let subject): return provider.rawValue + ":" + subject
            }
        }
    }

    /// The keyed hash an identifier is listed under.
    func key(_ identifier: Identifier) -> [UInt8] {
        HMACSHA256.authenticate(key: cooldownKey, message: Array(identifier.text.utf8))
    }

    /// Every identifier of the account, hashed.
    func keys(of state: AccountState) -> [String] {
        var identifiers: [Identifier] = []
        if let email = state.email { identifiers.append(.email(email.lowercased())) }
        if let phone = state.phone { identifiers.append(.phone(phone)) }
        for (provider, subject) in state.providerSubjects.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            identifiers.append(.provider(provider, subject))
        }
        return identifiers.map { Hex.encode(key($0)) }
    }
}

extension AccountService {
    /// Deletes the signed-in account (API.md "Deletion"): re-auth, no blockers (re-checked in
    /// the transaction), then every session revoked, the purge scheduled and the account's
    /// identifiers put on the re-signup cooldown list.
    public func deleteAccount(_ session: SessionRef, reauthToken: String?) async throws -> AccountState {
        let retention = self.retention
        return try await repository.execute(session.accountID) { state in
            .deleteAccount(
                sessionID: session.sessionID, reauthTokenHash: reauthToken.map(ReauthGrantToken.hash),
                purgeDelay: retention.purgeDelay, cooldown: retention.cooldown, cooldownKeys: retention.keys(of: state))
        }.0
    }

    /// `409 signup_cooldown` while a deleted account's identifier is on the list.
    public func checkCooldown(_ identifier: Retention.Identifier) async throws {
        if try await repository.cooldown(keyHash: retention.key(identifier), at: clock.now()) != nil {
            throw IdentityError(
                .signupCooldown, "An account with this sign-in was deleted recently. You can sign up with it again 7 days after the deletion.")
        }
    }
}
