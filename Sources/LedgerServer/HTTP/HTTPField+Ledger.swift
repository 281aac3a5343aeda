import HTTPTypes

/// The headers the service reads beyond HTTP's standard ones.
extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
    static let contentTypeOptions = Self("X-Content-Type-Options")!
    static let contentSecurityPolicy = Self("Content-Security-Policy")!
    /// Which request fields chose the answer's form (RFC 9110 §12.5.5).
    static let vary = Self("Vary")!
    static let origin = Self("Origin")!
    static let xReauthToken = Self("X-Reauth-Token")!
    /// The console's form token, as its script sends it with a JSON call (docs/support.md).
    static let csrfToken = Self("X-CSRF-Token")!
    /// Who made a browser send a request: `same-origin`, `same-site`, `cross-site`, or `none` (typed, a bookmark).
    static let secFetchSite = Self("Sec-Fetch-Site")!
    /// Who is acting for the support desk (docs/support.md).
    static let ledgerOperator = Self("X-Ledger-Operator")!
    /// The app's own name for the device ("Ana's iPhone"), shown on the sessions screen.
    static let xDeviceName = Self("X-Device-Name")!
    /// The `device_token` a session answer gave this device: a sign-in with one the account
    /// knows is no new device (`new_sign_in` is decided by it alone).
    static let xDeviceToken = Self("X-Device-Token")!
}
