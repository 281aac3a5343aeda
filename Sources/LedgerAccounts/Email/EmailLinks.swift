import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// One-shot email links: a random token (stored only as its hash) inside a link to the app.
public struct EmailLinks: Sendable {
    /// How long a link works (`emailLinkLifetime`, `emailRevertLifetime` for the revert link
    /// sent to the old address) and how often links of one purpose may go (`linkResend`).
    let policies: Policies
    /// Where links point: `<base>/verify-email?token=…`, `<base>/reset-password?token=…`, `<base>/reauth?token=…`.
    public let baseURL: String

    public init(policies: Policies, baseURL: String) {
        self.policies = policies
        self.baseURL = baseURL
    }

    /// `resend_after` for a link of `purpose` just sent (or refused as needless) to `state`'s account.
    func resendAfter(_ purpose: AccountState.PendingLink.Purpose, _ state: AccountState, now: Date) -> Int {
        state.linkResendAfter(purpose, policy: policies.linkResend, now: now)
    }

    /// A new link for `purpose` and the message that carries it to `address`.
    func make(_ purpose: AccountState.PendingLink.Purpose, to address: String, now: Date) throws -> (AccountCommand.NewLink, OutboxMessage)
    {
        try make(purpose, to: address, now: now, template: Self.template(purpose), details: nil)
    }

    /// A revert link for the address an email change (or removal) took away, in its notice.
    func makeRevert(of change: RevertedChange, to address: String, now: Date) throws -> (AccountCommand.NewLink, OutboxMessage) {
        switch change {
        case .change: return try make(.emailRevert, to: address, now: now, template: "email_changed_notice", details: Self.revertNotice)
        case .removal:
            return try make(.emailRevert, to: address, now: now, template: "email_removed_notice", details: Self.removalNotice)
        }
    }

    /// What a revert link undoes.
    enum RevertedChange { case change, removal }

    private func make(
        _ purpose: AccountState.PendingLink.Purpose, to address: String, now: Date, template: String, details: String?
    ) throws -> (AccountCommand.NewLink, OutboxMessage) {
        let token = Base64URL.encode(try SecureRandom.bytes(32))
        let link = AccountCommand.NewLink(
            linkID: UUID.random(),
            expiresAt: now.addingTimeInterval(purpose == .emailRevert ? policies.emailRevertLifetime : policies.emailLinkLifetime),
            tokenHash: Hex.encode(IssuedTokens.tokenHash(token)))
        let message = OutboxMessage(
            channel: .email, to: address, template: template, link: "\(baseURL)/\(Self.path(purpose))?token=\(token)", token: token,
            details: details.map { ["message": $0, "secure_account": ImpliedMessages.secureAccountAdvice] }, expiresAt: link.expiresAt)
        return (link, message)
    }

    /// What the old address is told after an email change (the seeds' words), beside its
    /// revert link.
    public static let revertNotice = "Your email was changed. If this wasn't you, click here to revert."
    /// What a removed address is told, beside its revert link.
    public static let removalNotice = "Your email was removed from your account. If this wasn't you, click here to revert."

    /// The delivery template (docs/architecture.md "Delivery") of a link's message.
    static func template(_ purpose: AccountState.PendingLink.Purpose) -> String {
        switch purpose {
        case .verifyEmail: return "verify_email"
        case .passwordReset: return "password_reset"
        case .reauth: return "reauth_link"
        case .emailChange: return "email_change_confirm"
        case .emailRevert: return "email_changed_notice"
        case .emailAdd: return "email_add_confirm"
        }
    }

    static func path(_ purpose: AccountState.PendingLink.Purpose) -> String {
        switch purpose {
        case .verifyEmail: return "verify-email"
        case .passwordReset: return "reset-password"
        case .reauth: return "reauth"
        case .emailChange, .emailAdd: return "confirm-email-change"
        case .emailRevert: return "revert-email"
        }
    }
}
