import Foundation
import LedgerCore
import LedgerIdentity

/// An SMS or email to send, in the delivery payload (docs/architecture.md "Delivery"), or a
/// provider token to revoke (`provider`: never POSTed to the delivery webhook; see
/// `ProviderTokenRevocations`).
public struct OutboxMessage: Sendable, Equatable, Codable {
    public enum Channel: String, Sendable, Codable { case sms, email, provider }

    public var id: UUID
    public var channel: Channel
    public var to: String
    /// `otp`, `verify_email`, `email_change_confirm`, `email_change_notice`, `password_reset`,
    /// `reauth_link`, `email_add_confirm`, `email_changed_notice`, `email_removed_notice`,
    /// `new_sign_in`, `two_factor_changed`, `two_factor_limit_reached`, `method_added`,
    /// `method_removed`, `password_changed`, `passkey_suspect` (the templates of `LedgerDelivery`).
    public var template: String
    public var code: String?
    public var link: String?
    public var token: String?
    public var locale: String
    /// What an alert is about (`new_sign_in`: `device`, `signed_in_at`, `secure_account`;
    /// `two_factor_changed`: `change`, `changed_at`, `secure_account`; `two_factor_limit_reached`:
    /// `paused_until`, `reached_at`, `during`, `secure_account`; `passkey_suspect`: `passkey`,
    /// `detected_at`, `secure_account`; `email_changed_notice`: `message`,
    /// beside its revert link).
    public var details: [String: String]?
    /// When it may go first (nil: at once): a revocation parked for a sign-in not done.
    public var notBefore: Date?
    /// When the code or link it carries stops working: a message not sent by then is given up,
    /// not retried (nobody can use it), and Twilio is told not to hold a text longer.
    public var expiresAt: Date?
    /// The language of the request that asked for it (a password reset asked for from a
    /// browser), which comes before the account's; not stored: `inLocale` turns it into `locale`.
    public var requestedLanguage: Language?

    public init(
        id: UUID = UUID.random(), channel: Channel, to: String, template: String, code: String? = nil, link: String? = nil,
        token: String? = nil, locale: String = "en", details: [String: String]? = nil, notBefore: Date? = nil,
        expiresAt: Date? = nil
    ) {
        self.expiresAt = expiresAt
        self.notBefore = notBefore
        self.details = details
        self.id = id
        self.channel = channel
        self.to = to
        self.template = template
        self.code = code
        self.link = link
        self.token = token
        self.locale = locale
    }

    enum CodingKeys: String, CodingKey { case id, channel, to, template, code, link, token, locale, details }

    /// The message in the language of the request that asked for it (`requestedLanguage`),
    /// else the account's (`AccountState.messageLocale`: the one chosen in the profile, else the
    /// latest sign-in's `Accept-Language`) as it was before the change that queues the message,
    /// so a sign-in does not choose the language of its own new sign-in alert (an intruder's
    /// `Accept-Language` would make the owner's alert unreadable to them). A message the change
    /// asked for (a sign-up's verification link) takes the change's language when the account
    /// had none; an alert (`after` nil) never does; else `fallback` (`LEDGER_DEFAULT_LOCALE`).
    public func inLocale(before: AccountState, after: AccountState?, default fallback: Language) -> OutboxMessage {
        var message = self
        message.locale =
            requestedLanguage?.rawValue ?? Language.firstSupported([before.messageLocale, after?.messageLocale]) ?? fallback.rawValue
        message.requestedLanguage = nil
        return message
    }

    /// The payload POSTed to the delivery webhook: fields that do not apply are left out, and
    /// `sent_at` says when this attempt went, under the signature (a receiver refuses an old
    /// one: a captured request replayed).
    public func payload(sentAt: Date) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(Sent(message: self, sentAt: sentAt)))
    }

    private struct Sent: Encodable {
        let message: OutboxMessage
        let sentAt: Date
        enum CodingKeys: String, CodingKey { case sentAt = "sent_at" }

        func encode(to encoder: any Encoder) throws {
            try message.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(RFC3339.format(sentAt), forKey: .sentAt)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id.uuidString.lowercased(), forKey: .id)
        try container.encode(channel, forKey: .channel)
        try container.encode(to, forKey: .to)
        try container.encode(template, forKey: .template)
        try container.encodeIfPresent(code, forKey: .code)
        try container.encodeIfPresent(link, forKey: .link)
        try container.encodeIfPresent(token, forKey: .token)
        try container.encode(locale, forKey: .locale)
        try container.encodeIfPresent(details, forKey: .details)
    }
}
