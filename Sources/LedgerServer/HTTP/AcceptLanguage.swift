import Foundation
import LedgerIdentity

/// Reads the `Accept-Language` request header (RFC 9110 §12.5.4) as far as the service needs it.
enum AcceptLanguage {
    /// The first language the header names: `ka-GE` of `ka-GE,ka;q=0.9`. Entries that name
    /// none (empty, `*`, or parameters alone such as `;q=0.5`) are skipped; `nil` when no entry
    /// names one. Any header value is accepted, however malformed.
    static func firstLanguage(_ header: String?) -> String? {
        guard let header else { return nil }
        for entry in header.split(separator: ",") {
            // Never empty: without omitting empty pieces, a split has at least one.
            let tag = entry.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
                .trimmingCharacters(in: .whitespaces)
            if !tag.isEmpty && tag != "*" { return tag }
        }
        return nil
    }

    /// How much of a header is read: browsers send well under 100 bytes and 10 entries. A
    /// larger one (many fields joined, or HTTP/2 repeating a long indexed value for a few bytes
    /// each) costs no more than this to read.
    static let readLimit = (bytes: 512, entries: 16)

    /// The tag of the most preferred entry (by `q`, then order) in a language the service
    /// writes (`Language`): `ru` of `fr-FR, ru;q=0.8, en;q=0.5`; `q=0` entries are refused ones,
    /// and an entry whose `q` is not a qvalue (RFC 9110 §12.4.2: `0`, `1`, `0.ddd`) is skipped.
    /// Only the first `readLimit` bytes and entries are read.
    static func preferredSupported(_ header: String?) -> String? {
        guard let header else { return nil }
        var best: (tag: Substring, quality: Int)?
        for entry in header.utf8.prefix(readLimit.bytes).split(separator: UInt8(ascii: ","), maxSplits: readLimit.entries)
            .prefix(readLimit.entries)
        {
            var parts = entry.split(separator: UInt8(ascii: ";"), maxSplits: 2, omittingEmptySubsequences: false).makeIterator()
            guard let rawTag = parts.next() else { continue }
            let tag = Substring(trimmed(rawTag))
            guard tag.utf8.count <= 35, Language(tag: String(tag)) != nil else { continue }
            var quality = 1000
            if let parameter = parts.next() {
                guard let value = qvalue(trimmed(parameter)) else { continue }
                quality = value
            }
            if quality > 0, quality > best?.quality ?? 0 { best = (tag, quality) }
        }
        return best.flatMap { LanguageTag.normalize(String($0.tag)) }
    }

    /// `bytes` without the spaces and tabs around them.
    static func trimmed(_ bytes: Substring.UTF8View.SubSequence) -> Substring.UTF8View.SubSequence {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return bytes[bytes.startIndex..<bytes.startIndex]
        }
        return bytes[first...last]
    }

    /// A `q=…` parameter's value in thousandths: `q=0.8` is 800; nil when it is not a qvalue.
    static func qvalue(_ parameter: Substring.UTF8View.SubSequence) -> Int? {
        let bytes = Array(parameter)
        guard bytes.count >= 3, bytes[0] | 0x20 == UInt8(ascii: "q"), bytes[1] == UInt8(ascii: "=") else { return nil }
        let value = bytes.dropFirst(2)
        guard let whole = value.first, whole == UInt8(ascii: "0") || whole == UInt8(ascii: "1") else { return nil }
        let fraction = value.dropFirst()
        if fraction.isEmpty { return whole == UInt8(ascii: "1") ? 1000 : 0 }
        let digits = fraction.dropFirst()
        guard fraction.first == UInt8(ascii: "."), digits.count <= 3, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        var thousandths = 0
        for (index, digit) in digits.enumerated() { thousandths += Int(digit - 0x30) * [100, 10, 1][index] }
        if whole == UInt8(ascii: "1") { return thousandths == 0 ? 1000 : nil }
        return thousandths
    }
}
