import Foundation
import LedgerCore
import LedgerCrypto

/// The `X-Ledger-Signature` of every webhook this service sends (deliveries and event pushes):
/// the lower-case hex HMAC-SHA256 of the raw body under the shared secret, as docs/event-consumers.md has it.
///
/// Receivers recompute the MAC over the exact body bytes and compare in constant time, refuse a
/// body whose `sent_at` is more than a few minutes old (a captured request replayed), and drop
/// ids they have already processed (a delivery's `id`, the events' `event_id`s: delivery is at
/// least once).
public enum WebhookSignature {
    public static let headerName = "X-Ledger-Signature"

    public static func header(secret: String, body: [UInt8]) -> String {
        Hex.encode(mac(secret: secret, body: body))
    }

    /// Whether `header` signs `body` with `secret`.
    public static func isValid(_ header: String, secret: String, body: [UInt8]) -> Bool {
        guard let signature = Hex.decode(header.lowercased()) else { return false }
        return ConstantTime.equals(signature, mac(secret: secret, body: body))
    }

    static func mac(secret: String, body: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticate(key: Array(secret.utf8), message: body)
    }
}
