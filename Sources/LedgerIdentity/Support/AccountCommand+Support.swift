import Foundation

extension AccountCommand {
    /// A call of the support desk on one account (docs/support.md): who made it, and what it
    /// does. Every call, a look included, is recorded on the account's stream as an `admin.*`
    /// event before its effects.
    public struct SupportCall: Sendable, Equatable {
        public var actor: SupportActor
        public var action: SupportAction

        public init(actor: SupportActor, action: SupportAction) {
            self.actor = actor
            self.action = action
        }
    }
}

/// Who acts for support: an API key (`accounts:support`, `accounts:admin`) or a staff member of
/// the console, and the person named as the operator (`X-Ledger-Operator`).
public struct SupportActor: Sendable, Equatable {
    /// The API key that made the call, when a key did.
    public var keyID: UUID?
    /// The staff member, when the console made the call.
    public var staffID: UUID?
    /// Who is acting: 1–200 characters, checked by the caller.
    public var operatorName: String

    public init(keyID: UUID? = nil, staffID: UUID? = nil, operatorName: String) {
        self.keyID = keyID
        self.staffID = staffID
        self.operatorName = operatorName
    }
}

/// What a support call does. Every change names its reason (1–500 characters).
public enum SupportAction: Sendable, Equatable {
    /// A look at the account: its summary, its sessions, or a search that found it.
    case view(AccountEvent.AdminRecord.View)
    /// Every session and re-auth grant ends.
    case signOut(reason: String)
    /// A reset link to the verified address.
    case sendPasswordReset(AccountCommand.NewLink, reason: String)
    /// Two-factor off, its recovery codes void, every session ended.
    case resetTwoFactor(reason: String)
    /// A sign-in method removed (the phone, the email with its password, Apple, Google): never
    /// the last one.
    case removeMethod(SignInMethod, reason: String)
    /// A passkey removed: never the last way in.
    case removePasskey(UUID, reason: String)
    case disable(reason: String)
    case enable(reason: String)

    /// The `admin.*` event that records it.
    public var recordKind: AccountEvent.AdminRecord.Action {
        switch self {
        case .view: .viewed
        case .signOut: .signedOut
        case .sendPasswordReset: .passwordResetSent
        case .resetTwoFactor: .twoFactorReset
        case .removeMethod, .removePasskey: .methodRemoved
        case .disable: .disabled
        case .enable: .enabled
        }
    }

    /// The reason a change gives; nil for a look.
    public var reason: String? {
        switch self {
        case .view: nil
        case .signOut(let reason), .sendPasswordReset(_, let reason), .resetTwoFactor(let reason), .removeMethod(_, let reason),
            .removePasskey(_, let reason), .disable(let reason), .enable(let reason):
            reason
        }
    }
}
