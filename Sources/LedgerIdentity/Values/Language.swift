import Foundation

/// The languages the service writes in (docs/accounts.md "Languages"): every email, text, link
/// page and API error message exists in each. Georgian first: the product is Georgia-first.
public enum Language: String, CaseIterable, Sendable, Codable {
    case ka, en, ru

    /// The language of a tag (`ka-GE` → `ka`), when it is one of these.
    public init?(tag: String?) {
        guard let tag, let primary = tag.split(separator: "-", maxSplits: 1).first?.lowercased(),
            let language = Language(rawValue: primary)
        else { return nil }
        self = language
    }

    /// The first of `tags` in one of these languages, as it was written (`ka-GE` keeps its
    /// region, which an operator's `NAME.ka-GE.PART` template may use); nil for none.
    public static func firstSupported(_ tags: [String?]) -> String? {
        tags.lazy.compactMap { $0 }.first { Language(tag: $0) != nil }
    }
}
