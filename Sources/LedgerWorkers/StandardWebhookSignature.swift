import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto

/// The Standard Webhooks headers of a push (standardwebhooks.com; what `standardwebhooks` and
/// `svix` verify): `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`,
/// `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` under each secret, space-separated
/// while a rotated secret still signs.
public enum StandardWebhookSignature {
    public static let idHeader = "webhook-id"
    public static let timestampHeader = "webhook-timestamp"
    public static let signatureHeader = "webhook-signature"

    /// The `webhook-signature` value for `body` sent as `id` at `timestamp`.
    public static func signature(id: String, timestamp: Int64, body: [UInt8], secrets: [WebhookSecret]) -> String {
        let signed = Array("\(id).\(timestamp).".utf8) + body
        return secrets.map { "v1," + Data(HMACSHA256.authenticate(key: $0.key, message: signed)).base64EncodedString() }
            .joined(separator: " ")
    }

    /// The three headers of a push sent as `id` now (`timestamp`, Unix seconds).
    public static func headers(id: String, timestamp: Int64, body: [UInt8], secrets: [WebhookSecret]) -> [(name: String, value: String)] {
        [
            (idHeader, id), (timestampHeader, String(timestamp)),
            (signatureHeader, signature(id: id, timestamp: timestamp, body: body, secrets: secrets)),
        ]
    }

    /// The id of one batch of a subscription: the same for every retry of the batch (its first
    /// and last events), another for each new one, so receivers can drop a batch seen before.
    public static func messageID(subscription: UUID, firstEvent: UUID, lastEvent: UUID) -> String {
        let digest = SHA256.hash(Array("\(subscription.lowercased)|\(firstEvent.lowercased)|\(lastEvent.lowercased)".utf8))
        return "msg_" + Hex.encode(Array(digest.prefix(16)))
    }
}
