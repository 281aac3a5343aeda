import Foundation

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
}
