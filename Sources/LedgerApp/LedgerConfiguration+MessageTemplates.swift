import LedgerDelivery
import LedgerServer

extension LedgerConfiguration {
    /// The templates messages are rendered with: the built-in ones and `LEDGER_TEMPLATES_DIR`'s,
    /// showing `LEDGER_BRAND_*`, `LEDGER_SUPPORT_EMAIL` and the lifetimes this service gives
    /// codes and links. Throws `TemplateError` for an override that does not parse, so `serve`
    /// stops before a message is lost.
    public func messageTemplates() throws -> MessageTemplates {
        try MessageTemplates(
            brand: MessageBrand(name: brandName, url: brandURL, color: brandColor), supportEmail: supportEmail,
            lifetimes: MessageLifetimes(
                codeSeconds: Int(policies.otp.ttl), linkSeconds: Int(policies.emailLinkLifetime),
                revertSeconds: Int(policies.emailRevertLifetime)),
            overridesDirectory: templatesDirectory)
    }
}
