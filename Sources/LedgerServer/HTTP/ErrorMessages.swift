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
struct ErrorMessages: Sendable {
    /// One language's messages: the exact ones, and those with values as their literal pieces.
    struct Catalogue: Sendable {
        var exact: [String: String] = [:]
        var patterns: [(pieces: [String], translation: [String])] = []
    }

    let catalogues: [Language: Catalogue]

    /// The catalogues built in; none (English everywhere) only if the bundle lost them, which
    /// `ErrorMessagesTests` would show.
    static let builtIn: ErrorMessages = (try? ErrorMessages(bundle: .module)) ?? ErrorMessages(catalogues: [:])

    init(catalogues: [Language: Catalogue]) {
        self.catalogues = catalogues
    }

    /// Reads `errors/LANGUAGE.json` for every language but English.
    init(bundle: Bundle) throws {
        var catalogues: [Language: Catalogue] = [:]
        for language in Language.allCases where language != .en {
            guard let url = bundle.url(forResource: language.rawValue, withExtension: "json", subdirectory: "errors") else {
                throw CocoaError(.fileNoSuchFile)
            }
            let entries = try JSONDecoder().decode([String: String].self, from: Data(contentsOf: url))
            catalogues[language] = Self.catalogue(entries)
        }
        self.catalogues = catalogues
    }

    static func catalogue(_ entries: [String: String]) -> Catalogue {
        var catalogue = Catalogue()
        // Longest first: of two patterns that both fit, the more specific wins.
        for (english, translated) in entries.sorted(by: { $0.key.count > $1.key.count }) {
            if english.contains("{}") {
                catalogue.patterns.append((english.components(separatedBy: "{}"), translated.components(separatedBy: "{}")))
            } else {
                catalogue.exact[english] = translated
            }
        }
        return catalogue
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
