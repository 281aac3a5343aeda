import Foundation
import LedgerAccounts
import LedgerCore

/// Sends each email through the operator's relay (`LEDGER_SMTP_URL`): renders it with the
/// templates, composes the MIME message (`MIMEMessage`) and hands it to libcurl on the
/// connection pool's own threads.
///
/// A failure is a `DeliveryError` whose kind says what the dispatcher does with it (see
/// `DeliveryError(smtp:secrets:)`): retry an SMTP 4xx or a network error, not a 5xx about the
/// recipient or message, and log authentication and TLS failures as the operator's to fix. Its
/// description names no recipient, password, code or link.
///
/// Call `shutdown()` when the service stops.
public struct SMTPDeliverySink: DeliverySink {
    public let from: EmailMailbox
    public let replyTo: EmailMailbox?
    let renderer: any MessageRendering
    let pool: SMTPConnectionPool
    let clock: any LedgerClock

    public var provider: String { "smtp" }

    /// `from`: `LEDGER_EMAIL_FROM`; `replyTo`: `LEDGER_SUPPORT_EMAIL`; both as `Name <address>` or
    /// a bare address. Throws an error naming the variable when either is not an address.
    public init(
        configuration: SMTPConfiguration, from: String = "321Fit <no-reply@321.fit>", replyTo: String? = "support@321.fit",
        renderer: any MessageRendering, clock: any LedgerClock = SystemClock()
    ) throws {
        guard let sender = try? EmailMailbox.parse(from) else {
            throw SMTPConfigurationError("LEDGER_EMAIL_FROM must be an address, or Name <address> (like 321Fit <no-reply@321.fit>)")
        }
        self.from = sender
        if let replyTo, !replyTo.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let support = try? EmailMailbox.parse(replyTo) else {
                throw SMTPConfigurationError("LEDGER_SUPPORT_EMAIL must be an address, or Name <address>")
            }
            self.replyTo = support
        } else {
            self.replyTo = nil
        }
        self.renderer = renderer
        self.clock = clock
        // EHLO names the sender's domain when it can go in a URL as it is.
        let domain = sender.domain
        let heloName = domain.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }) ? domain : "localhost"
        pool = SMTPConnectionPool(configuration: configuration, heloName: heloName)
    }

    public func deliver(_ message: OutboxMessage) async throws {
        guard message.channel == .email else {
            throw DeliveryError("the SMTP sink sends email, not \(message.channel.rawValue)", kind: .configuration)
        }
        let secrets = [message.to, message.code, message.link, message.token].compactMap { $0 }
        let mime = try compose(message, secrets: secrets)
        do {
            try await pool.send(from: from.address, to: [mime.to.address], message: mime.encoded())
        } catch let failure as SMTPTransferError {
            throw DeliveryError(smtp: failure, secrets: secrets)
        } catch is CancellationError {
            throw DeliveryError("the SMTP send was cancelled (the connections are shutting down); not sent", kind: .temporary)
        }
    }

    /// The message as it goes out. Its `Message-ID` comes from the outbox message's id, so a
    /// retry after an answer lost on the way is the same message to the recipient's mail client.
    func compose(_ message: OutboxMessage, secrets: [String]) throws -> MIMEMessage {
        guard let recipient = try? EmailMailbox(address: message.to.trimmingCharacters(in: .whitespaces)) else {
            throw DeliveryError("the recipient's address cannot be sent over SMTP", kind: .permanent)
        }
        let email: RenderedEmail
        do {
            email = try renderer.email(message)
        } catch {
            // A broken template (an operator's override) is theirs to fix; retried meanwhile.
            throw DeliveryError(
                "the \(message.template) email could not be rendered: \(SMTPReplyMask.mask("\(error)", secrets: secrets))",
                kind: .configuration)
        }
        return MIMEMessage(
            from: from, to: recipient, replyTo: replyTo, subject: email.subject, text: email.text, html: email.html, date: clock.now(),
            messageID: "\(message.id.uuidString.lowercased())@\(from.domain)")
    }

    /// Connections opened so far (a burst on one connection opened one).
    public var connectionsOpened: Int { pool.connectionsOpened }

    /// Closes the relay connections (QUIT) and stops their threads.
    public func shutdown() async {
        await pool.shutdown()
    }
}
