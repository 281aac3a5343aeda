import Foundation
import LedgerCore
import LedgerIdentity

/// The support desk's use cases (docs/support.md): find an account, look at it, and make the
/// everyday fixes. Every call is a command on the account's stream, so its `admin.*` record and
/// its effects commit together, under the stream's lock, and a look is recorded like a change.
public struct SupportDesk: Sendable {
    let environment: AccountsEnvironment
    let catalog: CountryCatalog
    var repository: any AccountRepository { environment.repository }

    public init(environment: AccountsEnvironment, catalog: CountryCatalog = .standard) {
        self.environment = environment
        self.catalog = catalog
    }

    /// The accounts `query` names exactly, each recorded as looked at (`admin.viewed`,
    /// `view: search`). Counted against the caller's reads first (`Policies.supportReadLimit`),
    /// so a stolen key cannot test a list of addresses faster than a person would. A deleted
    /// account is found by its address or number while the cooldown holds them, and by its id
    /// until its purge and after.
    public func search(_ query: SupportQuery, actor: SupportActor) async throws -> [SupportSummary] {
        let accountIDs = try await find(query, actor: actor)
        var found: [SupportSummary] = []
        for accountID in accountIDs {
            do {
                found.append(try await record(.view(.search), on: accountID, actor: actor))
            } catch let error as IdentityError where error.code == .noAccount {
                continue
            }
        }
        return found
    }

    /// The account's summary, recorded as looked at; counted with the searches.
    public func summary(_ accountID: UUID, actor: SupportActor) async throws -> SupportSummary {
        try await admitRead(by: actor)
        return try await record(.view(.summary), on: accountID, actor: actor)
    }

    /// The account's live sessions, recorded as looked at; counted with the searches.
    public func sessions(_ accountID: UUID, actor: SupportActor) async throws -> [AccountState.Session] {
        try await admitRead(by: actor)
        return try await record(.view(.sessions), on: accountID, actor: actor).liveSessions
    }

    /// Counts one read (a search or a look) of `actor` before it reads or records anything: a
    /// look is a write to the person's stream, so a stolen key must not make them without end.
    func admitRead(by actor: SupportActor) async throws {
        try await environment.limits.admitSupportRead(by: actor.readCounter, now: environment.clock.now())
    }

    /// Signs the account out everywhere: every session and re-auth grant ends. Returns how many
    /// sessions ended.
    public func signOut(_ accountID: UUID, actor: SupportActor, reason: String) async throws -> Int {
        let reason = try Self.checkedReason(reason)
        let (_, events) = try await repository.execute(accountID) { _ in .support(.init(actor: actor, action: .signOut(reason: reason))) }
        return events.filter { if case .sessionRevoked = $0 { true } else { false } }.count
    }

    /// Sends a password-reset link to the account's verified address (`409 no_verified_email`
    /// without one), as "Forgot password" would, within the same resend limits.
    public func sendPasswordReset(_ accountID: UUID, actor: SupportActor, reason: String) async throws {
        let reason = try Self.checkedReason(reason)
        let loaded = try await repository.load(accountID)
        try loaded.requireSupportChangeable()
        let email = try loaded.requireVerifiedEmailForSupport()
        let (link, message) = try environment.links.make(.passwordReset, to: email, now: environment.clock.now())
        _ = try await repository.execute(accountID, outbox: [message]) { state in
            // The link was made for the address read before the lock: it must still be the one.
            guard state.email == email else { throw IdentityError(.noVerifiedEmail, "The account's email changed meanwhile. Try again.") }
            return .support(.init(actor: actor, action: .sendPasswordReset(link, reason: reason)))
        }
    }

    /// Turns two-factor off (its recovery codes void) and ends every session.
    public func resetTwoFactor(_ accountID: UUID, actor: SupportActor, reason: String) async throws -> SupportSummary {
        try await record(.resetTwoFactor(reason: try Self.checkedReason(reason)), on: accountID, actor: actor)
    }

    /// Removes a sign-in method (`phone`, `password` for the email with its password, `apple`,
    /// `google`); never the last. Returns the account after.
    public func removeMethod(_ method: SignInMethod, of accountID: UUID, actor: SupportActor, reason: String) async throws -> AccountState {
        try await record(.removeMethod(method, reason: try Self.checkedReason(reason)), on: accountID, actor: actor).state
    }

    /// Removes a passkey; never the last way in. Returns the account after.
    public func removePasskey(_ passkeyID: UUID, of accountID: UUID, actor: SupportActor, reason: String) async throws -> AccountState {
        try await record(.removePasskey(passkeyID, reason: try Self.checkedReason(reason)), on: accountID, actor: actor).state
    }

    /// Disables the account: every session ends, and no sign-in starts one until it is enabled.
    public func disable(_ accountID: UUID, actor: SupportActor, reason: String) async throws -> SupportSummary {
        try await record(.disable(reason: try Self.checkedReason(reason)), on: accountID, actor: actor)
    }

    public func enable(_ accountID: UUID, actor: SupportActor, reason: String) async throws -> SupportSummary {
        try await record(.enable(reason: try Self.checkedReason(reason)), on: accountID, actor: actor)
    }

    /// A call: its record, its effects and the owner's notice in one commit; the account after.
    @discardableResult
    func record(_ action: SupportAction, on accountID: UUID, actor: SupportActor) async throws -> SupportSummary {
        let (state, _) = try await repository.execute(accountID) { _ in .support(.init(actor: actor, action: action)) }
        return SupportSummary(state, at: environment.clock.now())
    }

    /// A change's reason, trimmed: 1–500 characters counted as Unicode scalars (so combining
    /// marks cannot stretch it), lines allowed, no other control or format character (no bidi
    /// override to make a record read differently than it is); `422` otherwise.
    public static func checkedReason(_ raw: String) throws -> String {
        let reason = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...500).contains(reason.unicodeScalars.count), !reason.unicodeScalars.contains(where: { isHidden($0) && $0 != "\n" })
        else {
            throw AccountService.ValidationFailure(problems: [
                .init(field: "reason", code: "invalid_reason", message: "Say why, in 1–500 characters.")
            ])
        }
        return reason
    }

    /// An operator's name as a header gave it, trimmed: 1–200 Unicode scalars, no control or
    /// format character; nil otherwise.
    public static func checkedOperator(_ raw: String?) -> String? {
        guard let name = raw?.trimmingCharacters(in: .whitespaces), (1...200).contains(name.unicodeScalars.count),
            !name.unicodeScalars.contains(where: isHidden)
        else { return nil }
        return name
    }

    /// A control character, or a format one (bidi overrides, zero-width marks) but the joiner
    /// emoji use.
    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control: return true
        case .format: return scalar != "\u{200D}"
        default: return false
        }
    }
}
