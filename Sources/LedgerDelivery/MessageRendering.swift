import Foundation
import LedgerAccounts

/// An email as a person reads it: its subject, a plain-text body and an HTML body.
public struct RenderedEmail: Sendable, Equatable {
    public var subject: String
    public var text: String
    public var html: String

    public init(subject: String, text: String, html: String) {
        self.subject = subject
        self.text = text
        self.html = html
    }
}

/// Turns an outbox message (its template, code, link, details and locale) into what goes out.
/// The SMTP and SMS sinks render through it; the templates (`MessageTemplates`) implement it.
public protocol MessageRendering: Sendable {
    /// The email of `message` (`channel` email).
    func email(_ message: OutboxMessage) throws -> RenderedEmail
    /// The text of `message` (`channel` sms): one segment where the text allows.
    func sms(_ message: OutboxMessage) throws -> String
}
