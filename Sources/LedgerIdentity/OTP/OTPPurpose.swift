/// What a phone code is for (docs/architecture.md "Phone and OTP").
public enum OTPPurpose: String, Sendable, CaseIterable, Codable {
    /// Signs in the account holding the number, or creates one.
    case signIn = "sign_in"
    case addPhone = "add_phone"
    case changePhone = "change_phone"
    /// "Verify it's you" by the account's own number.
    case reauth

    /// Every purpose but sign-in belongs to a signed-in session.
    public var needsSession: Bool { self != .signIn }
}
