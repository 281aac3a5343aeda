/// How long what a message carries works, as its words say it ("It expires in 5 minutes."):
/// the service's settings (`LEDGER_OTP_TTL_SECONDS`, `LEDGER_EMAIL_LINK_TTL_SECONDS`,
/// `LEDGER_EMAIL_REVERT_TTL_SECONDS`), so the copy stays true when an operator changes them.
public struct MessageLifetimes: Sendable, Equatable {
    /// A text's code.
    public var codeSeconds: Int
    /// A verification, reset, re-auth or confirmation link.
    public var linkSeconds: Int
    /// The revert link in an email-changed or email-removed notice.
    public var revertSeconds: Int

    /// The service's defaults: 5 minutes, 30 minutes, 7 days.
    public init(codeSeconds: Int = 300, linkSeconds: Int = 1800, revertSeconds: Int = 604_800) {
        self.codeSeconds = codeSeconds
        self.linkSeconds = linkSeconds
        self.revertSeconds = revertSeconds
    }
}
