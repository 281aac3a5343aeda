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

    /// The policies' purge delay and cooldown, with the cooldown list's key.
    public init(policies: Policies, cooldownKey: [UInt8]) {
        self.purgeDelay = policies.purgeDelay
        self.cooldown = policies.signupCooldown
        self.cooldownKey = cooldownKey
    }

    /// The development setup's: the product's windows and a fixed cooldown key (production
    /// derives it from the master key).
    public static let development = Retention(policies: .standard, cooldownKey: Array("account-ledger/development-cooldown-key".utf8))

    /// `409 signup_cooldown`, naming the configured period.
    package var cooldownError: IdentityError {
        IdentityError(
            .signupCooldown,
            "An account with this sign-in was deleted recently. You can sign up with it again "
                + "\(Self.spelled(cooldown)) after the deletion.")
    }

    /// A duration as the cooldown copy says it: "7 days", "1 day", "12 hours", "90 seconds",
    /// in the largest unit that divides it whole (`Language.duration`).
    public static func spelled(_ duration: TimeInterval) -> String {
        Language.en.duration(Int(duration.rounded()))
    }

    /// An identifier a deleted account held; or, `imported`, the record an account was imported
    /// from (its `(source, external_id)`: `account_imports` keeps it keyed, under the same key).
    public enum Identifier: Sendable, Hashable {
        case email(String), phone(String), provider(IdentityProvider, String)
        case imported(source: String, externalID: String)

        package var text: String {
            switch self {
            case .email(let normalized): return "email:" + normalized
            case .phone(let e164): return "phone:" + e164
            case .provider(let provider, let subject): return provider.rawValue + ":" + subject
            // A source name holds no newline of its own (`AccountImporter` refuses control characters).
            case .imported(let source, let externalID): return "import:" + source + "\n" + externalID
            }
        }
    }

    /// The keyed hash an identifier is listed under.
    package func key(_ identifier: Identifier) -> [UInt8] {
        HMACSHA256.authenticate(key: cooldownKey, message: Array(identifier.text.utf8))
    }

    /// Every identifier the account proved, hashed: its number (a code reached it), its provider
    /// identities, and its email only once verified. An address never proven may be someone
    /// else's: holding it back would let whoever registered it lock its owner out of sign-up,
    /// a week at a time.
    func keys(of state: AccountState) -> [String] {
        var identifiers: [Identifier] = []
        if let email = state.email, state.emailVerified { identifiers.append(.email(EmailAddress.normalize(email))) }
        if let phone = state.phone { identifiers.append(.phone(phone)) }
        for (provider, subject) in state.providerSubjects.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            identifiers.append(.provider(provider, subject))
        }
        return identifiers.map { Hex.encode(key($0)) }
    }
}

extension AccountService {
    /// Deletes the signed-in account (docs/architecture.md "Deletion"): re-auth, no blockers (re-checked in
    /// the transaction), then every session revoked, the purge scheduled and the account's
    /// identifiers put on the re-signup cooldown list.
    public func deleteAccount(_ session: SessionRef, reauthToken: String?) async throws -> AccountState {
        let retention = environment.retention
        return try await repository.execute(session.accountID) { state in
            .deleteAccount(
                sessionID: session.sessionID, reauthTokenHash: reauthToken.map(ReauthGrantToken.hash),
                purgeDelay: retention.purgeDelay, cooldown: retention.cooldown, cooldownKeys: retention.keys(of: state))
        }.0
    }

    /// Schedules a deletion that holds blocked when it was asked for (Apple's account-delete),
    /// once none blocks it; true when it was scheduled now.
    @discardableResult
    public func completeRequestedDeletion(_ accountID: UUID) async throws -> Bool {
        let retention = environment.retention
        let (_, events) = try await repository.execute(accountID) { state in
            .completeRequestedDeletion(
                purgeDelay: retention.purgeDelay, cooldown: retention.cooldown, cooldownKeys: retention.keys(of: state))
        }
        return !events.isEmpty
    }
}

extension AccountsEnvironment {
    /// Whether `claimant` may take `identifier`, held by `owner` (nil: nobody): `taken` when
    /// another account holds it, `signup_cooldown` while a deleted account's is on the list.
    func checkClaimable(
        _ identifier: Retention.Identifier, owner: UUID?, claimant: UUID, taken: @autoclosure () -> any Error
    ) async throws {
        if let owner {
            guard owner == claimant else { throw taken() }
        } else {
            try await checkCooldown(identifier, claimant: claimant)
        }
    }

    /// `409 signup_cooldown` while a deleted account's identifier is on the list: for a new
    /// account, and for an address or number added to another account (else the cooldown
    /// would only take another route); `409 email_held` while another account may still revert
    /// its change or removal of the address.
    func checkCooldown(_ identifier: Retention.Identifier, claimant: UUID? = nil) async throws {
        // The account that listed the address (one it removed) may take it back.
        if let listed = try await repository.listing(keyHash: retention.key(identifier), at: clock.now()),
            listed.accountID != claimant
        {
            throw retention.refusal(listed.reason)
        }
    }
}
