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
        /// The signed-in session that linked it (nil: a sign-up, or a sign-in that proved the account).
        public var sessionID: UUID?
        enum CodingKeys: String, CodingKey { case provider, subject, email, emailVerified = "email_verified", sessionID = "session_id" }

        public init(provider: IdentityProvider, subject: String, email: String?, emailVerified: Bool, sessionID: UUID? = nil) {
            self.provider = provider
            self.subject = subject
            self.email = email
            self.emailVerified = emailVerified
            self.sessionID = sessionID
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
        /// Why, when not a disconnect: `apple_consent_revoked`, `email_reverted` (added in the
        /// span a revert undid), `address_proven` (a reset proved an address never verified).
        public var reason: MethodRemovalReason?

        public init(provider: IdentityProvider, subject: String, reason: MethodRemovalReason? = nil) {
            self.provider = provider
            self.subject = subject
            self.reason = reason
        }
    }
}

extension AccountEvent {
    /// The providers area's events in the catalogue (`AccountEvent.registry`): each with its
    /// payload type and the commands whose decision appends it.
    static let providersRegistrations: [Registration] = [
        .init(
            .providerLinked, ProviderLinked.self, AccountEvent.providerLinked,
            emittedBy: ["linkProvider", "mergeProvider", "registerByProvider", "importAccount"]),
        .init(
            .providerUnlinked, ProviderUnlinked.self, AccountEvent.providerUnlinked,
            emittedBy: ["unlinkProvider", "handleAppleNotification", "revertEmail", "resetPassword", "support"]),
        .init(
            .providerTokensStored, ProviderTokensStored.self, AccountEvent.providerTokensStored,
            emittedBy: ["storeProviderTokens", "completeMFAChallenge"]),
        .init(
            .providerTokenRevoked, ProviderTokenRevoked.self, AccountEvent.providerTokenRevoked,
            emittedBy: [
                "unlinkProvider", "handleAppleNotification", "completeRequestedDeletion", "deleteAccount", "revertEmail", "resetPassword",
                "support",
            ]),
        .init(
            .appleNotificationReceived, AppleNotificationReceived.self, AccountEvent.appleNotificationReceived,
            emittedBy: ["handleAppleNotification"]),
    ]
}
