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

    /// The tag of the most preferred entry (by `q`, then order) in a language the service
    /// writes (`Language`): `ru` of `fr-FR, ru;q=0.8, en;q=0.5`; `q=0` entries are refused ones.
    static func preferredSupported(_ header: String?) -> String? {
        guard let header else { return nil }
        var best: (tag: String, quality: Double)?
        for entry in header.split(separator: ",") {
            let parts = entry.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = LanguageTag.normalize(parts.first), Language(tag: tag) != nil else { continue }
            let quality =
                parts.dropFirst().lazy.compactMap { parameter -> Double? in
                    let pair = parameter.replacingOccurrences(of: " ", with: "").split(separator: "=", maxSplits: 1)
                    return pair.count == 2 && pair[0].lowercased() == "q" ? Double(pair[1]) : nil
                }.first ?? 1
            if quality > 0, quality > best?.quality ?? 0 { best = (tag, quality) }
        }
        return best?.tag
    }
}
