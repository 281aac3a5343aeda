import Foundation

/// An email address as the service stores it: trimmed, and compared lower-cased.
///
/// At most 254 characters with a local part of at most 64 (RFC 5321); otherwise
/// `422 invalid_email` "Enter a valid email address.".
public struct EmailAddress: Sendable, Hashable, CustomStringConvertible {
    /// As typed, trimmed.
    public let value: String
    /// `normalize(value)`: the key of the uniqueness claim.
    public let normalized: String

    /// The address with its local part hidden but for the first character (`a•••@example.com`):
    /// enough for its owner to recognise it, little for anyone else.
    public var hint: String {
        guard let at = value.lastIndex(of: "@") else { return "•••" }
        return String(value[..<at].prefix(1)) + "•••" + String(value[at...])
    }

    public init?(_ raw: String) {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard Self.isValid(trimmed) else { return nil }
        self.value = trimmed
        self.normalized = Self.normalize(trimmed)
    }

    /// The one normalization of an address, everywhere it is compared or stored as a claim
    /// (SQL never lower-cases on its own: PostgreSQL's `lower` follows the database's locale,
    /// Swift's the Unicode tables). Trimmed, lower-cased and composed (NFC), so "Ä" typed as one
    /// character or as "A" and a combining diaeresis is one address.
    public static func normalize(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased().precomposedStringWithCanonicalMapping
    }

    /// Whether `text` is an Apple private-relay address (`…@privaterelay.appleid.com`): the
    /// person's real address stays hidden, so another address may replace it.
    public static func isPrivateRelay(_ text: String) -> Bool {
        normalize(text).hasSuffix("@privaterelay.appleid.com")
    }

    /// The part before the `@`, lower-cased.
    public var localPart: String { String(normalized.split(separator: "@").first ?? "") }

    public var description: String { value }

    static func isValid(_ text: String) -> Bool {
        guard text.utf8.count <= 254, !text.contains(where: { $0.isWhitespace || $0.isNewline }) else { return false }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        let local = parts[0]
        let domain = parts[1]
        guard !local.isEmpty, local.utf8.count <= 64, !domain.isEmpty else { return false }
        guard !local.hasPrefix("."), !local.hasSuffix("."), !local.contains("..") else { return false }
        let localAllowed = CharacterSet(charactersIn: "!#$%&'*+/=?^_`{|}~.-").union(.alphanumerics)
        guard local.unicodeScalars.allSatisfy({ localAllowed.contains($0) }) else { return false }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        for label in labels {
            guard !label.isEmpty, label.utf8.count <= 63, !label.hasPrefix("-"), !label.hasSuffix("-"),
                label.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || $0 == "-" })
            else { return false }
        }
        return true
    }
}
