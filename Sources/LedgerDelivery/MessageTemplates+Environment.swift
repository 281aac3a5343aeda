import Foundation

extension MessageTemplates {
    /// The templates as the service's environment sets them up: `LEDGER_TEMPLATES_DIR` (the
    /// override folder), `LEDGER_BRAND_NAME`, `LEDGER_BRAND_URL`, `LEDGER_BRAND_COLOR` (default
    /// 321Fit, https://321.fit, #1d4ed8), `LEDGER_SUPPORT_EMAIL` (default support@321.fit) and
    /// the lifetimes the messages state (`LEDGER_OTP_TTL_SECONDS`, `LEDGER_EMAIL_LINK_TTL_SECONDS`,
    /// `LEDGER_EMAIL_REVERT_TTL_SECONDS`: the service's configuration checks their ranges; one
    /// that is not a positive number keeps its default here). An empty variable counts as unset.
    /// Throws `MessageBrand.Invalid` or `TemplateError`.
    public init(environment: [String: String]) throws {
        func value(_ name: String) -> String? {
            environment[name].flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        }
        func seconds(_ name: String) -> Int? {
            value(name).flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.flatMap { $0 > 0 ? $0 : nil }
        }
        let brand = try MessageBrand(
            name: value("LEDGER_BRAND_NAME") ?? MessageBrand.defaultName, url: value("LEDGER_BRAND_URL") ?? MessageBrand.defaultURL,
            color: value("LEDGER_BRAND_COLOR") ?? MessageBrand.defaultColor)
        let defaults = MessageLifetimes()
        let lifetimes = MessageLifetimes(
            codeSeconds: seconds("LEDGER_OTP_TTL_SECONDS") ?? defaults.codeSeconds,
            linkSeconds: seconds("LEDGER_EMAIL_LINK_TTL_SECONDS") ?? defaults.linkSeconds,
            revertSeconds: seconds("LEDGER_EMAIL_REVERT_TTL_SECONDS") ?? defaults.revertSeconds)
        try self.init(
            brand: brand, supportEmail: value("LEDGER_SUPPORT_EMAIL") ?? "support@321.fit", lifetimes: lifetimes,
            overridesDirectory: value("LEDGER_TEMPLATES_DIR"))
    }
}
