import Foundation

extension AccountEvent {
    /// The sign-in phone number was removed.
    public struct PhoneRemoved: Codable, Sendable, Equatable {
        public var phone: String

        public init(phone: String) {
            self.phone = phone
        }
    }

    /// The email was removed, and the password with it (it signed in with that email).
    public struct EmailRemoved: Codable, Sendable, Equatable {
        public var email: String
        public var passwordRemoved: Bool
        enum CodingKeys: String, CodingKey { case email, passwordRemoved = "password_removed" }

        public init(email: String, passwordRemoved: Bool) {
            self.email = email
            self.passwordRemoved = passwordRemoved
        }
    }
}
