import Foundation
import LedgerCrypto

/// A webhook subscription's signing secret in the Standard Webhooks form: `whsec_` and the
/// standard base64 (padded or not) of 24 to 64 random bytes; the HMAC key is the decoded bytes.
/// Secrets given before this form existed are any 16–256 characters, and key by their UTF-8.
public struct WebhookSecret: Sendable, Equatable {
    /// The secret as the subscriber holds it.
    public let text: String

    public static let prefix = "whsec_"
    static let byteRange = 24...64

    /// A new secret of 32 random bytes.
    public static func generate() throws -> WebhookSecret {
        WebhookSecret(unchecked: prefix + Data(try SecureRandom.bytes(32)).base64EncodedString())
    }

    /// `text` when it has the Standard Webhooks form; nil otherwise.
    public init?(_ text: String) {
        guard let key = Self.decodedKey(text), Self.byteRange.contains(key.count) else { return nil }
        self.text = text
    }

    /// A secret read back from storage: a standard one, or one given before the form existed.
    public init(unchecked text: String) {
        self.text = text
    }

    /// The HMAC key: the decoded bytes of a `whsec_` secret, else the text's UTF-8.
    public var key: [UInt8] {
        Self.decodedKey(text) ?? Array(text.utf8)
    }

    static func decodedKey(_ text: String) -> [UInt8]? {
        guard text.hasPrefix(prefix) else { return nil }
        var base64 = String(text.dropFirst(prefix.count))
        guard !base64.isEmpty, base64.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+/=".contains($0)) }) else {
            return nil
        }
        while base64.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64).map(Array.init)
    }
}
