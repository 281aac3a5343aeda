extension MessageTemplates {
    /// The templates as the service's environment sets them up: `LEDGER_TEMPLATES_DIR` (the
    /// override folder), `LEDGER_BRAND_NAME`, `LEDGER_BRAND_URL`, `LEDGER_BRAND_COLOR` (default
    /// 321Fit, https://321.fit, #1d4ed8) and `LEDGER_SUPPORT_EMAIL` (default support@321.fit).
    /// An empty variable counts as unset. Throws `MessageBrand.Invalid` or `TemplateError`.
    public init(environment: [String: String]) throws {
        func value(_ name: String) -> String? {
            environment[name].flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        }
        let brand = try MessageBrand(
            name: value("LEDGER_BRAND_NAME") ?? MessageBrand.defaultName, url: value("LEDGER_BRAND_URL") ?? MessageBrand.defaultURL,
            color: value("LEDGER_BRAND_COLOR") ?? MessageBrand.defaultColor)
        try self.init(
            brand: brand, supportEmail: value("LEDGER_SUPPORT_EMAIL") ?? "support@321.fit",
            overridesDirectory: value("LEDGER_TEMPLATES_DIR"))
    }
}
