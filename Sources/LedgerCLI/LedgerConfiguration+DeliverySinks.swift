import Foundation
import LedgerCore
import LedgerDelivery
import LedgerServer
import LedgerWorkers
import Logging

extension LedgerConfiguration {
    /// Where emails and texts go: SMTP and Twilio when configured (rendered with
    /// `templates`), else the delivery webhook, else (development only: `serve` refuses to start
    /// otherwise) the log.
    func deliverySinks(
        templates: MessageTemplates, clock: any LedgerClock, logger: Logger
    ) throws -> (email: any DeliverySink, sms: any DeliverySink) {
        let webhook: (any DeliverySink)? = deliveryWebhookURL.map {
            WebhookDeliverySink(url: $0, secret: deliveryWebhookSecret, clock: clock)
        }
        let fallback = webhook ?? LogDeliverySink()
        let sms: any DeliverySink =
            try twilio.map {
                try TwilioSMSSink(
                    accountSID: $0.accountSID, authToken: $0.authToken, from: $0.from, baseURL: $0.baseURL, rendering: templates)
            } ?? fallback
        let email = fallback
        for (channel, sink) in [("emails", email), ("texts", sms)] where sink is LogDeliverySink {
            logger.warning("no way out for \(channel): they go to the log, codes and links included (development only)")
        }
        return (email: email, sms: sms)
    }
}
