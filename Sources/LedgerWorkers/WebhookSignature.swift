import Foundation
import LedgerCore
import LedgerCrypto

/// The `X-Ledger-Signature` of every webhook this service sends (deliveries and event pushes):
/// `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + body)>`.
///
/// Receivers recompute the MAC over the exact body bytes, compare in constant time, refuse a
/// `t` more than a few minutes from their clock (a replayed request), and drop event ids they
/// have already processed (delivery is at least once).
public enum WebhookSignature {
    public static let headerName = "X-Ledger-Signature"

    public static func header(secret: String, body: [UInt8], at time: Date) -> String {
        let timestamp = String(Int(time.timeIntervalSince1970))
        return "t=\(timestamp),v1=\(Hex.encode(mac(secret: secret, timestamp: timestamp, body: body)))"
    }

    /// Whether `header` signs `body` with `secret` at a time within `tolerance` of `now`.
    public static func isValid(_ header: String, secret: String, body: [UInt8], now: Date, tolerance: TimeInterval = 300) -> Bool {
        var timestamp: String?
        var signature: [UInt8]?
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { timestamp = pair[1] }
            if pair[0] == "v1" { signature = Hex.decode(pair[1]) }
        }
        guard let timestamp, let seconds = Double(timestamp), let signature,
            abs(now.timeIntervalSince1970 - seconds) <= tolerance
        else { return false }
        return ConstantTime.equals(signature, mac(secret: secret, timestamp: timestamp, body: body))
    }

    static func mac(secret: String, timestamp: String, body: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticate(key: Array(secret.utf8), message: Array((timestamp + ".").utf8) + body)
    }
}
