import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// One-shot email links: a random token (stored only as its hash) inside a link to the app.
public struct EmailLinks: Sendable {
    /// How long a link works.
    public let lifetime: TimeInterval
    /// Where links point: `<base>/verify-email?token=…`, `<base>/reset-password?token=…`, `<base>/reauth?token=…`.
    public let baseURL: String
    /// How long the revert link to the old address works after an email change.
    public let revertLifetime: TimeInterval
    /// How often links of one purpose may go to an account.
    public let resend: LinkResendPolicy

    public init(
        lifetime: TimeInterval = Policies.standard.emailLinkLifetime, baseURL: String = "https://321.fit",
        revertLifetime: TimeInterval = Policies.standard.emailRevertLifetime, resend: LinkResendPolicy = Policies.standard.linkResend
    ) {
        self.lifetime = lifetime
        self.baseURL = baseURL
        self.revertLifetime = revertLifetime
        self.resend = resend
    }

    /// `resend_after` for a link of `purpose` just sent (or refused as needless) to `state`'s account.
    func resendAfter(_ purpose: AccountState.PendingLink.Purpose, _ state: AccountState, now: Date) -> Int {
        state.linkResendAfter(purpose, policy: resend, now: now)
    }

    /// A new link for `purpose` and the message that carries it to `address`.
    func make(_ purpose: AccountState.PendingLink.Purpose, to address: String, now: Date) throws -> (AccountCommand.NewLink, OutboxMessage)
    {
        let token = Base64URL.encode(try SecureRandom.bytes(32))
        let link = AccountCommand.NewLink(
            linkID: UUID.random(), expiresAt: now.addingTimeInterval(purpose == .emailRevert ? revertLifetime : lifetime),
            tokenHash: Hex.encode(IssuedTokens.tokenHash(token)), resend: resend)
        let message = OutboxMessage(
            channel: .email, to: address, template: Self.template(purpose),
            link: "\(baseURL)/\(Self.path(purpose))?token=\(token)", token: token,
            details: purpose == .emailRevert ? ["message": Self.revertNotice] : nil)
        return (link, message)
    }

    /// What the old address is told after an email change (the seeds' words), beside its
    /// revert link.
    public static let revertNotice = "Your email was changed. If this wasn't you, click here to revert."

    /// The delivery template (docs/architecture.md "Delivery") of a link's message.
    static func template(_ purpose: AccountState.PendingLink.Purpose) -> String {
        switch purpose {
        case .verifyEmail: return "verify_email"
        case .passwordReset: return "password_reset"
        case .reauth: return "reauth_link"
        case .emailChange: return "email_change_confirm"
        case .emailRevert: return "email_changed_notice"
        }
    }

    static func path(_ purpose: AccountState.PendingLink.Purpose) -> String {
        switch purpose {
        case .verifyEmail: return "verify-email"
        case .passwordReset: return "reset-password"
        case .reauth: return "reauth"
        case .emailChange: return "confirm-email-change"
        case .emailRevert: return "revert-email"
        }
    }
}
