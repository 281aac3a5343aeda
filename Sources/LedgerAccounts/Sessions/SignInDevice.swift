/// Where a sign-in comes from: the client's label, the `device_token` it sent, its language.
public struct SignInDevice: Sendable, Equatable {
    public let label: String?
    public let token: String?
    public let locale: String?

    public init(label: String?, token: String?, locale: String?) {
        self.label = label
        self.token = token
        self.locale = locale
    }
}
