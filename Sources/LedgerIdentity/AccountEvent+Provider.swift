import Foundation

extension AccountEvent {
    /// An Apple or Google identity became a sign-in method of the account.
    public struct ProviderLinked: Codable, Sendable, Equatable {
        public var provider: IdentityProvider
        /// The provider's stable user id (`sub`).
        public var subject: String
        /// The address the provider gave at the time, if any (Apple gives it only once).
        public var email: String?
        public var emailVerified: Bool
        enum CodingKeys: String, CodingKey { case provider, subject, email, emailVerified = "email_verified" }

        public init(provider: IdentityProvider, subject: String, email: String?, emailVerified: Bool) {
            self.provider = provider
            self.subject = subject
            self.email = email
            self.emailVerified = emailVerified
        }
    }

    /// The provider was disconnected; its subject is free again.
    /// Apple's server-to-server notification, as received (what it did follows in the same append).
    public struct AppleNotificationReceived: Codable, Sendable, Equatable {
        public var notificationID: String
        public var type: AppleNotice.Kind
        public var eventTime: Date?
        enum CodingKeys: String, CodingKey { case notificationID = "notification_id", type, eventTime = "event_time" }

        public init(notificationID: String, type: AppleNotice.Kind, eventTime: Date?) {
            self.notificationID = notificationID
            self.type = type
            self.eventTime = eventTime
        }
    }

    public struct ProviderUnlinked: Codable, Sendable, Equatable {
        public var provider: IdentityProvider
        public var subject: String

        public init(provider: IdentityProvider, subject: String) {
            self.provider = provider
            self.subject = subject
        }
    }
}
