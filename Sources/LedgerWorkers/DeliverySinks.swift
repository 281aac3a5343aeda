import AsyncHTTPClient
import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto
import LedgerDelivery
import Logging
import NIOCore
import NIOHTTP1

/// Development sink: writes each message to the log, codes and links included and the
/// recipient masked, so a developer can follow a flow with curl; and, when `messagesPath` is
/// set, appends it whole to that file as a JSON line (`ledger dev messages` reads it). Never
/// used when a webhook is configured; `serve` uses it only in development mode.
public struct LogDeliverySink: DeliverySink {
    let logger: Logger
    let messagesPath: String?
    let clock: any LedgerClock

    public init(
        messagesPath: String? = nil, clock: any LedgerClock = SystemClock(), logger: Logger = Logger(label: "ledger.delivery")
    ) {
        self.logger = logger
        self.messagesPath = messagesPath
        self.clock = clock
    }

    public var provider: String { "log" }

    public func deliver(_ message: OutboxMessage) async throws {
        // The file first: a message that cannot be recorded is retried, and logged once it is.
        if let messagesPath {
            var line = try message.payload(sentAt: clock.now())
            line.append(UInt8(ascii: "\n"))
            try DevelopmentMessageFile.append(line, to: messagesPath)
        }
        logger.notice(
            "delivery (development log sink)",
            metadata: [
                "channel": "\(message.channel.rawValue)", "template": "\(message.template)",
                "to": "\(RecipientMask.mask(message.to))", "code": "\(message.code ?? "-")", "link": "\(message.link ?? "-")",
            ])
    }
}

/// POSTs each message as JSON (docs/architecture.md "Delivery") to the operator's bridge, signed
/// (`WebhookSignature`, and Standard Webhooks' headers) when a secret is set.
public struct WebhookDeliverySink: DeliverySink {
    let url: String
    let secret: String?
    let httpClient: HTTPClient
    let clock: any LedgerClock

    public init(url: String, secret: String?, httpClient: HTTPClient = .outbound, clock: any LedgerClock = SystemClock()) {
        self.url = url
        self.secret = secret
        self.httpClient = httpClient
        self.clock = clock
    }

    public var provider: String { "webhook" }

    public func deliver(_ message: OutboxMessage) async throws {
        let body = try message.payload(sentAt: clock.now())
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "X-Ledger-Delivery-Id", value: message.id.uuidString.lowercased())
        if let secret {
            request.headers.add(name: WebhookSignature.headerName, value: WebhookSignature.header(secret: secret, body: body))
            // Standard Webhooks too (the bridge may verify with `standardwebhooks`): the message's
            // id is the same on every retry; a `whsec_` secret keys by its bytes, another by its UTF-8.
            let headers = StandardWebhookSignature.headers(
                id: "msg_" + message.id.uuidString.lowercased(), timestamp: Int64(clock.now().timeIntervalSince1970), body: body,
                secrets: [WebhookSecret(unchecked: secret)])
            for header in headers { request.headers.add(name: header.name, value: header.value) }
        }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await httpClient.execute(request, timeout: .seconds(10))
        guard (200..<300).contains(response.status.code) else {
            throw DeliveryError("the webhook answered \(response.status.code)")
        }
    }
}
