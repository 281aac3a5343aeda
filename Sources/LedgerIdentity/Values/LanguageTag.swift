/// A language as the service keeps it for an account's messages (`Accept-Language` at sign-in):
/// a BCP 47 tag cut to its language and region, `en`, `ka`, `en-GB`, `pt-BR`, `es-419`.
public enum LanguageTag {
    /// The tag's language and region in their usual case (`zh-Hant-TW` is `zh-TW`,
    /// `en-GB-oxendict` is `en-GB`); nil for anything that is not a tag (a header is the
    /// client's to say: only letters, digits and one hyphen ever name template files).
    public static func normalize(_ raw: String?) -> String? {
        guard let raw, raw.utf8.count <= 35 else { return nil }
        let subtags = raw.split(separator: "-", omittingEmptySubsequences: false)
        guard
            subtags.allSatisfy({ (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }),
            let language = subtags.first, (2...3).contains(language.count), language.allSatisfy(\.isLetter)
        else { return nil }
        // A script (four letters) may stand between the language and the region.
        var rest = subtags.dropFirst()
        if let script = rest.first, script.count == 4, script.allSatisfy(\.isLetter) { rest = rest.dropFirst() }
        guard let region = rest.first,
            (region.count == 2 && region.allSatisfy(\.isLetter)) || (region.count == 3 && region.allSatisfy(\.isNumber))
        else { return language.lowercased() }
        return language.lowercased() + "-" + region.uppercased()
    }
}
