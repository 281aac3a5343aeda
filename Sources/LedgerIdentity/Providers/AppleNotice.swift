import Foundation

/// An Apple server-to-server notification about one Apple ID, as the account acts on it.
public struct AppleNotice: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable, Codable {
        /// The person stopped using their Apple ID with the app: Apple is unlinked (kept when it
        /// is the only way in) and every session ends.
        case consentRevoked = "consent-revoked"
        /// The Apple ID is gone: the account's deletion is scheduled as if the person asked, or,
        /// when holds block it, the account is disabled and the event says why.
        case accountDelete = "account-delete"
        /// The private-relay address stopped (or started again) forwarding mail: recorded.
        case emailDisabled = "email-disabled"
        case emailEnabled = "email-enabled"
    }

    /// Apple's id of the notification (`jti`): each acts once.
    public var id: String
    public var kind: Kind
    /// The Apple ID (`sub`).
    public var subject: String
    public var eventTime: Date?
    /// For `accountDelete`: the deletion's settings, as `deleteAccount` takes them.
    public var purgeDelay: TimeInterval
    public var cooldown: TimeInterval
    public var cooldownKeys: [String]

    public init(
        id: String, kind: Kind, subject: String, eventTime: Date?, purgeDelay: TimeInterval = 0, cooldown: TimeInterval = 0,
        cooldownKeys: [String] = []
    ) {
        self.id = id
        self.kind = kind
        self.subject = subject
        self.eventTime = eventTime
        self.purgeDelay = purgeDelay
        self.cooldown = cooldown
        self.cooldownKeys = cooldownKeys
    }
}
