/// A sign-in provider.
public enum IdentityProvider: String, Sendable, CaseIterable, Codable {
    case apple, google

    public var signInMethod: SignInMethod { self == .apple ? .apple : .google }
    public var reauthMethod: ReauthMethod { self == .apple ? .apple : .google }
    /// The re-auth action that disconnects it.
    public var disconnectAction: ReauthAction { self == .apple ? .disconnectApple : .disconnectGoogle }
    /// How the apps name it.
    public var displayName: String { self == .apple ? "Apple" : "Google" }
}
