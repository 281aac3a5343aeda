import Foundation
import LedgerIdentity

/// The API's error messages in Georgian and Russian (docs/accounts.md "Languages"), read from
/// `Resources/errors/ka.json` and `ru.json`: each maps the English message, as the service
/// writes it, to the language's. A translator edits those files; nothing else changes with the
/// language (the `error` code, `field`s, `retry_after`).
///
/// A message with values in it (a number, a provider, a duration) is a key with `{}` for each:
/// `"Use at most {} characters, …"`. Its translation puts the values back in order, and a
/// duration ("7 days") is said again in the language (`Language.duration`).
public struct ErrorMessages: Sendable {
    /// One language's messages: the exact ones, and those with values as their literal pieces.
    struct Catalogue: Sendable {
        var exact: [String: String] = [:]
        var patterns: [(pieces: [String], translation: [String])] = []
    }

    let catalogues: [Language: Catalogue]

    /// The catalogues built in; none (English everywhere) only if the bundle lost them, which
    /// `serve` refuses to start with (`checkBuiltIn`).
    static let builtIn: ErrorMessages = (try? ErrorMessages(bundle: .module)) ?? ErrorMessages(catalogues: [:])

    /// Reads the built-in catalogues as `builtIn` does, throwing what it would swallow: a
    /// missing or malformed file, a translation whose values do not match its key's.
    public static func checkBuiltIn() throws {
        _ = try ErrorMessages(bundle: .module)
    }

    /// A catalogue file that cannot be used, named.
    public struct InvalidCatalogue: Error, CustomStringConvertible {
        public let description: String
    }

    init(catalogues: [Language: Catalogue]) {
        self.catalogues = catalogues
    }

    /// Reads `errors/LANGUAGE.json` for every language but English.
    init(bundle: Bundle) throws {
        var catalogues: [Language: Catalogue] = [:]
        for language in Language.allCases where language != .en {
            let file = "errors/\(language.rawValue).json"
            guard let url = bundle.url(forResource: language.rawValue, withExtension: "json", subdirectory: "errors"),
                let entries = try? JSONDecoder().decode([String: String].self, from: Data(contentsOf: url))
            else { throw InvalidCatalogue(description: "\(file): missing, or not a JSON object of strings") }
            for (english, translated) in entries
            where english.components(separatedBy: "{}").count != translated.components(separatedBy: "{}").count {
                throw InvalidCatalogue(description: "\(file): \"\(translated)\" does not have the {} of \"\(english)\"")
            }
            catalogues[language] = Self.catalogue(entries)
        }
        self.catalogues = catalogues
    }

    static func catalogue(_ entries: [String: String]) -> Catalogue {
        var catalogue = Catalogue()
        // Longest first: of two patterns that both fit, the more specific wins (ties by key, so
        // every start chooses alike).
        for (english, translated) in entries.sorted(by: { ($0.key.count, $1.key) > ($1.key.count, $0.key) }) {
            if english.contains("{}") {
                catalogue.patterns.append((english.components(separatedBy: "{}"), translated.components(separatedBy: "{}")))
            } else {
                catalogue.exact[english] = translated
            }
        }
        return catalogue
    }

    /// Whether `language`'s catalogue has `key` itself (`{}` for each value), not only a
    /// pattern that happens to fit it.
    func hasEntry(_ key: String, in language: Language) -> Bool {
        guard let catalogue = catalogues[language] else { return false }
        return catalogue.exact[key] != nil || catalogue.patterns.contains { $0.pieces == key.components(separatedBy: "{}") }
    }

    /// `message` in `language`; the English itself when the language is English or the
    /// message has no translation.
    func translate(_ message: String, to language: Language) -> String {
        translation(of: message, to: language) ?? message
    }

    /// `message` in `language`, when the catalogue has it.
    func translation(of message: String, to language: Language) -> String? {
        guard let catalogue = catalogues[language] else { return language == .en ? message : nil }
        if let exact = catalogue.exact[message] { return exact }
        for pattern in catalogue.patterns {
            guard let values = Self.values(in: message, pieces: pattern.pieces), values.count == pattern.translation.count - 1
            else { continue }
            var text = pattern.translation[0]
            for (value, piece) in zip(values, pattern.translation.dropFirst()) {
                text += Language.seconds(ofEnglishDuration: value).map(language.duration) ?? String(value)
                text += piece
            }
            return text
        }
        return nil
    }

    /// The values between `pieces` in `message`, when it is made of them in order.
    static func values(in message: String, pieces: [String]) -> [Substring]? {
        guard let first = pieces.first, let last = pieces.last, message.hasPrefix(first), message.hasSuffix(last),
            message.count >= first.count + last.count
        else { return nil }
        var rest = message.dropFirst(first.count).dropLast(last.count)
        var values: [Substring] = []
        for piece in pieces.dropFirst().dropLast() {
            guard !piece.isEmpty, let range = rest.range(of: piece) else { return nil }
            values.append(rest[..<range.lowerBound])
            rest = rest[range.upperBound...]
        }
        values.append(rest)
        return values.allSatisfy { !$0.isEmpty } ? values : nil
    }
}
