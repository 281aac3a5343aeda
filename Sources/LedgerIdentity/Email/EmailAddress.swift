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
        let trimmed = Self.isTrimmed(raw) ? raw : raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard Self.isValid(trimmed) else { return nil }
        self.value = trimmed
        self.normalized = Self.normalize(trimmed)
    }

    /// Whether `text` starts and ends with a printable ASCII character, so trimming would keep
    /// it whole: Foundation's trimming (and its Unicode tables) only for the rest.
    static func isTrimmed(_ text: String) -> Bool {
        guard let first = text.utf8.first, let last = text.utf8.last else { return true }
        return (0x21..<0x7F).contains(first) && (0x21..<0x7F).contains(last)
    }

    /// The one normalization of an address, everywhere it is compared or stored as a claim
    /// (SQL never lower-cases on its own: PostgreSQL's `lower` follows the database's locale,
    /// Swift's the Unicode tables). Trimmed, lower-cased and composed (NFC), so "Ä" typed as one
    /// character or as "A" and a combining diaeresis is one address.
    public static func normalize(_ text: String) -> String {
        // ASCII is its own composed form: lower-casing it is all there is to do.
        if isTrimmed(text), text.utf8.allSatisfy({ $0 < 0x80 }) { return text.lowercased() }
        return text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased().precomposedStringWithCanonicalMapping
    }

    /// Whether `text` is an Apple private-relay address (`…@privaterelay.appleid.com`): the
    /// person's real address stays hidden, so another address may replace it.
    public static func isPrivateRelay(_ text: String) -> Bool {
        normalize(text).hasSuffix("@privaterelay.appleid.com")
    }

    /// The part before the `@`, lower-cased.
    public var localPart: String { String(normalized.split(separator: "@").first ?? "") }

    public var description: String { value }

    /// The characters a local part may hold besides letters and digits.
    static let localPunctuation = "!#$%&'*+/=?^_`{|}~.-"
    static let localAllowed = CharacterSet(charactersIn: localPunctuation).union(.alphanumerics)

    static func isValid(_ text: String) -> Bool {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return isValidASCII(Array(text.utf8)) }
        return isValidUnicode(text)
    }

    /// `isValidUnicode` for an address of ASCII alone, on its bytes: letters and digits are
    /// then `[A-Za-z0-9]`, and every whitespace or control byte fails the character checks.
    static func isValidASCII(_ bytes: [UInt8]) -> Bool {
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
        let punctuation = Array(localPunctuation.utf8)
        let dot = UInt8(ascii: ".")
        let hyphen = UInt8(ascii: "-")
        guard bytes.count <= 254 else { return false }
        let parts = bytes.split(separator: UInt8(ascii: "@"), omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        let local = parts[0]
        let domain = parts[1]
        guard !local.isEmpty, local.count <= 64, !domain.isEmpty else { return false }
        guard local.first != dot, local.last != dot, !zip(local, local.dropFirst()).contains(where: { $0 == dot && $1 == dot })
        else { return false }
        guard local.allSatisfy({ isAlphanumeric($0) || punctuation.contains($0) }) else { return false }
        let labels = domain.split(separator: dot, omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        for label in labels {
            guard !label.isEmpty, label.count <= 63, label.first != hyphen, label.last != hyphen,
                label.allSatisfy({ isAlphanumeric($0) || $0 == hyphen })
            else { return false }
        }
        return true
    }

    static func isValidUnicode(_ text: String) -> Bool {
        guard text.utf8.count <= 254, !text.contains(where: { $0.isWhitespace || $0.isNewline }) else { return false }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        let local = parts[0]
        let domain = parts[1]
        guard !local.isEmpty, local.utf8.count <= 64, !domain.isEmpty else { return false }
        guard !local.hasPrefix("."), !local.hasSuffix("."), !local.contains("..") else { return false }
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
