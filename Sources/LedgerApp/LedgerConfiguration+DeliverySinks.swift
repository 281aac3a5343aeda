import Foundation
import LedgerCore
import LedgerDelivery
import LedgerServer
import LedgerWorkers
import Logging

/// The ways emails and texts leave this instance.
public struct DeliverySinks: Sendable {
    public var email: any DeliverySink
    public var sms: any DeliverySink

    /// Closes the SMTP relay's connections (QUIT) and stops their threads.
    public func shutdown() async {
        await (email as? SMTPDeliverySink)?.shutdown()
    }
}

extension LedgerConfiguration {
    /// Where emails and texts go: SMTP and Twilio when configured (rendered with
    /// `templates`), else the delivery webhook, else (development only: `serve` refuses to start
    /// otherwise) the log. Throws for relay settings that cannot work, naming the variable.
    public func deliverySinks(templates: MessageTemplates, clock: any LedgerClock, logger: Logger) throws -> DeliverySinks {
        let webhook: (any DeliverySink)? = deliveryWebhookURL.map {
            WebhookDeliverySink(url: $0, secret: deliveryWebhookSecret, clock: clock)
        }
        let fallback = webhook ?? LogDeliverySink(messagesPath: developmentMessagesPath, clock: clock)
        let email: any DeliverySink =
            try smtpURL.map {
                try SMTPDeliverySink(
                    configuration: try SMTPConfiguration.parse(url: $0, caFile: smtpCAFile), from: emailFrom, replyTo: supportEmail,
                    renderer: templates, clock: clock)
            } ?? fallback
        let sms: any DeliverySink =
            try twilio.map {
                try TwilioSMSSink(
                    accountSID: $0.accountSID, authToken: $0.authToken, from: $0.from, baseURL: $0.baseURL, rendering: templates,
                    clock: clock)
            } ?? fallback
        for (channel, sink) in [("emails", email), ("texts", sms)] where sink is LogDeliverySink {
            logger.warning("no way out for \(channel): they go to the log, codes and links included (development only)")
        }
        return DeliverySinks(email: email, sms: sms)
    }
}

/// The sinks are a member of the service group that drains them after the dispatchers stop.
extension DeliverySinks: DrainingService {}
