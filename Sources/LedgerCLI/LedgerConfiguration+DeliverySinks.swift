import Foundation
import LedgerCore
import LedgerDelivery
import LedgerServer
import LedgerWorkers
import Logging

extension LedgerConfiguration {
    /// Where emails and texts go: SMTP and Twilio when configured, else the delivery webhook,
    /// else (development only: `serve` refuses to start otherwise) the log.
    func deliverySinks(clock: any LedgerClock, logger: Logger) throws -> (email: any DeliverySink, sms: any DeliverySink) {
        let webhook: (any DeliverySink)? = deliveryWebhookURL.map {
            WebhookDeliverySink(url: $0, secret: deliveryWebhookSecret, clock: clock)
        }
        let fallback = webhook ?? LogDeliverySink()
        if webhook == nil, !(smtpURL != nil && twilio != nil) {
            logger.warning("no way out for some messages: they go to the log (development only)")
        }
        return (email: fallback, sms: fallback)
    }
}
