import Foundation
import HTTPTypes
import HummingbirdTesting
import LedgerIdentity
import Testing

@testable import LedgerServer

/// The API's error messages in Georgian and Russian (docs/accounts.md "Languages"): every message
/// the sources write has both, the request's language picks one, and nothing but the message
/// changes.
@Suite("Error messages in every language")
struct ErrorMessagesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let scripts: [Language: ClosedRange<UInt32>] = [.ka: 0x10D0...0x10FF, .ru: 0x0400...0x04FF]

    @Test("every message the sources give an error or a field problem has a Georgian and a Russian one, in its script")
    func everyMessageTranslated() throws {
        let messages = try MessageScanner.messages(under: Self.root.appendingPathComponent("Sources"))
        // The scan finds the messages (a broken scan would pass with none).
        #expect(messages.count > 150)
        #expect(messages.contains("Incorrect email or password.") && messages.contains("The field {} is required."))
        #expect(
            messages.contains("Use {} or {}.") && messages.contains("The URL reaches a private, loopback, link-local or metadata address."))
        #expect(
            messages.contains("An account with this sign-in was deleted recently. You can sign up with it again {} after the deletion."))
        for message in messages.sorted() {
            for (language, script) in Self.scripts {
                // Its own entry: a pattern that merely fits ("Use {} or {}.") would leave half of it English.
                #expect(ErrorMessages.builtIn.hasEntry(message, in: language), "no \(language) entry for \"\(message)\"")
                let pieces = message.components(separatedBy: "{}")
                let sample = pieces.joined(separator: "‹v›")
                let translated = ErrorMessages.builtIn.translation(of: sample, to: language)
                #expect(translated != nil, "no \(language) for \"\(message)\"")
                guard let translated else { continue }
                #expect(translated.unicodeScalars.contains { script.contains($0.value) }, "\(language): \(translated)")
                #expect(translated.components(separatedBy: "‹v›").count == pieces.count, "\(language) drops a value: \(translated)")
            }
        }
    }

    @Test("values come back in place; a duration is said in the language; an unknown message stays English")
    func values() {
        let messages = ErrorMessages.builtIn
        #expect(
            messages.translate("Use at most 64 characters, without line breaks or invisible characters.", to: .ru)
                == "Используйте не больше 64 символов, без переносов строк и невидимых символов.")
        #expect(
            messages.translate("This Google account is already connected to another account.", to: .ka).hasPrefix("Google-ის ეს ანგარიში"))
        let cooldown = "An account with this sign-in was deleted recently. You can sign up with it again 7 days after the deletion."
        #expect(messages.translate(cooldown, to: .ru).hasSuffix("через 7 дней после удаления."))
        #expect(messages.translate(cooldown, to: .ka).hasSuffix("როცა წაშლიდან გავა 7 დღე."))
        #expect(messages.translate(cooldown.replacingOccurrences(of: "7 days", with: "1 day"), to: .ru).contains("через 1 день"))
        #expect(messages.translate(cooldown, to: .en) == cooldown)
        #expect(messages.translate("Something nobody wrote.", to: .ka) == "Something nobody wrote.")
        // Only a duration as `Language.duration` writes it is said again; anything else stays as it came.
        #expect(Language.seconds(ofEnglishDuration: "106751991167302 days") == nil)
        #expect(Language.seconds(ofEnglishDuration: "+7 days") == nil && Language.seconds(ofEnglishDuration: "0 days") == nil)
        #expect(Language.seconds(ofEnglishDuration: "7 days") == 604_800 && Language.seconds(ofEnglishDuration: "1 day") == 86_400)
        // Exact keys win; a pattern never matches a piece of nothing.
        #expect(ErrorMessages.values(in: "{} is not connected.", pieces: ["", " is not connected."]) == ["{}"])
        #expect(ErrorMessages.values(in: " is not connected.", pieces: ["", " is not connected."]) == nil)
    }

    @Test("the built-in catalogues load; a translation that drops a value is refused by name")
    func catalogueChecked() throws {
        try ErrorMessages.checkBuiltIn()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-errors-\(UUID())")
        let errors = folder.appendingPathComponent("errors")
        try FileManager.default.createDirectory(at: errors, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try #"{"Use at most {} characters.": "გამოიყენეთ ცოტა სიმბოლო."}"#.write(
            to: errors.appendingPathComponent("ka.json"), atomically: true, encoding: .utf8)
        try #"{}"#.write(to: errors.appendingPathComponent("ru.json"), atomically: true, encoding: .utf8)
        let bundle = try #require(Bundle(path: folder.path))
        #expect(throws: ErrorMessages.InvalidCatalogue.self) { try ErrorMessages(bundle: bundle) }
        try "not json".write(to: errors.appendingPathComponent("ka.json"), atomically: true, encoding: .utf8)
        #expect(throws: ErrorMessages.InvalidCatalogue.self) { try ErrorMessages(bundle: bundle) }
    }

    @Test("a failed sign-in in the request's language: by Accept-Language and its q, else LEDGER_DEFAULT_LOCALE; the code the same")
    func byRequest() async throws {
        try await MemoryBackend.with { db in
            for (defaultLanguage, header, expected) in [
                (Language.en, "ka-GE", "ელფოსტა ან პაროლი არასწორია."),
                (.en, "fr-FR, en;q=0.5, ru;q=0.8", "Неверный адрес электронной почты или пароль."),
                (.en, nil, "Incorrect email or password."), (.en, "de", "Incorrect email or password."),
                (.ka, nil, "ელფოსტა ან პაროლი არასწორია."), (.ka, "en-GB", "Incorrect email or password."),
            ] as [(Language, String?, String)] {
                try await testApplication(db, configure: { $0.policies.defaultLanguage = defaultLanguage }).test(.router) { client in
                    let headers: HTTPFields = header.map { [.acceptLanguage: $0] } ?? [:]
                    let answer = try await call(
                        client, .post, "/auth/email/login", ["email": "nobody@example.com", "password": "wrong-password-1"],
                        headers: headers)
                    #expect(answer.status == .unauthorized && answer.string("error") == "invalid_credentials")
                    #expect(answer.string("message") == expected, "\(defaultLanguage) \(header ?? "none")")
                    // Said, and kept apart by shared caches.
                    let language = expected.unicodeScalars.first.map { $0.value >= 0x10D0 ? "ka" : $0.value >= 0x0400 ? "ru" : "en" }
                    #expect(answer.headers[.contentLanguage] == language && answer.headers[HTTPField.Name("Vary")!] == "Accept-Language")
                }
            }
        }
    }

    @Test("a signed-in call's refusal speaks the account's language before the request's")
    func byAccount() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let access = try await signUp(client, email: "nino@example.com")
                let bad = ["locale": "fr"]
                // No choice yet, and a sign-up without Accept-Language: the request's language.
                #expect(
                    try await call(client, .patch, "/me/profile", bad, token: access).string("message") == "Some fields need attention.")
                #expect(
                    try await call(client, .patch, "/me/profile", bad, token: access, headers: [.acceptLanguage: "ka"]).string("message")
                        == "ზოგიერთი ველი შესასწორებელია.")
                _ = try await call(client, .patch, "/me/profile", ["locale": "ru"], token: access)
                for header in [nil, "ka", "en"] as [String?] {
                    let answer = try await call(
                        client, .patch, "/me/profile", bad, token: access, headers: header.map { [.acceptLanguage: $0] } ?? [:])
                    #expect(answer.status == .unprocessableContent && answer.problemCodes == ["invalid_locale"])
                    #expect(answer.string("message") == "Проверьте некоторые поля.", "\(header ?? "none")")
                    #expect((answer.body["errors"] as? [[String: Any]])?.first?["message"] as? String == "Выберите ka, en или ru.")
                }
                // A signed-out call has no account: the request's language.
                let signedOut = try await call(client, .get, "/me", token: "not-a-token", headers: [.acceptLanguage: "ka"])
                #expect(signedOut.status == .unauthorized && signedOut.string("message") == "გასაგრძელებლად შედით ანგარიშში.")
            }
        }
    }

    @Test("a validation failure: each field's message in Russian, its field and code unchanged")
    func fieldProblems() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let english = try await call(client, .post, "/auth/email/signup", ["email": "not-an-address", "password": "short"])
                let russian = try await call(
                    client, .post, "/auth/email/signup", ["email": "not-an-address", "password": "short"], headers: [.acceptLanguage: "ru"])
                #expect(russian.status == english.status && russian.string("error") == english.string("error"))
                #expect(russian.string("message") == "Проверьте некоторые поля.")
                let fields = { (answer: Answer) in (answer.body["errors"] as? [[String: Any]]) ?? [] }
                #expect(fields(russian).count == fields(english).count && !fields(english).isEmpty)
                for (ru, en) in zip(fields(russian), fields(english)) {
                    #expect(ru["field"] as? String == en["field"] as? String && ru["code"] as? String == en["code"] as? String)
                    #expect((ru["message"] as? String)?.unicodeScalars.contains { (0x0400...0x04FF).contains($0.value) } == true, "\(ru)")
                }
                // A body that is not JSON: the framework's refusal in Georgian too.
                let malformed = try await client.execute(
                    uri: "/auth/email/login", method: .post, headers: [.contentType: "application/json", .acceptLanguage: "ka"],
                    body: .init(string: "{")
                ) { response in
                    expectConforms(response, "post", "/auth/email/login")
                    return try json(response)
                }
                #expect(malformed["error"] as? String == "invalid_request")
                #expect((malformed["message"] as? String)?.unicodeScalars.contains { (0x10D0...0x10FF).contains($0.value) } == true)
            }
        }
    }
}

/// Finds the messages the sources write into errors: the message argument of every
/// `IdentityError(…)`, `APIError(…)` and `.refused(…)` (a webhook's destination; its string literals at the call's own level, joined:
/// `"… " + "…"`), every `message:` literal outside `PostgresError`, and every literal with
/// words in `Request+decodeJSON.swift` (a body's decoding errors, returned from branches). An
/// interpolation is `{}`.
enum MessageScanner {
    static let modules = ["LedgerIdentity", "LedgerAccounts", "LedgerAccountsPostgres", "LedgerServer"]

    static func messages(under sources: URL) throws -> Set<String> {
        var found: Set<String> = []
        for module in modules {
            let folder = sources.appendingPathComponent(module)
            guard let files = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let path as String in files where path.hasSuffix(".swift") {
                let text = Array(try String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8))
                found.formUnion(messages(in: text, describing: path.hasSuffix("Request+decodeJSON.swift")))
            }
        }
        return found
    }

    static func messages(in text: [Character], describing: Bool) -> [String] {
        var found: [String] = []
        var index = 0
        while index < text.count {
            if let call = ["IdentityError(", "APIError(", "refused("].first(where: { matches(text, index, $0) }) {
                let open = index + call.count
                let literals = topLevelLiterals(text, from: open)
                if !literals.isEmpty { found.append(literals.joined()) }
            } else if matches(text, index, "message: \""), !lineContains(text, index, "PostgresError(") {
                if let (literal, _) = literal(text, from: index + 9) { found.append(literal) }
            } else if describing, text[index] == "\"", let (literal, end) = literal(text, from: index) {
                // `describe` returns its messages from branches: every literal with words in it.
                if literal.contains(" ") { found.append(literal) }
                index = end
                continue
            }
            index += 1
        }
        return found
    }

    static func matches(_ text: [Character], _ index: Int, _ word: String) -> Bool {
        guard text[index] == word.first else { return false }
        let word = Array(word)
        guard index + word.count <= text.count, Array(text[index..<index + word.count]) == word else { return false }
        // A whole name: `XAPIError(` is not `APIError(`.
        return index == 0 || !(text[index - 1].isLetter || text[index - 1].isNumber)
    }

    static func lineContains(_ text: [Character], _ index: Int, _ word: String) -> Bool {
        var start = index
        while start > 0, text[start - 1] != "\n" { start -= 1 }
        return String(text[start..<index]).contains(word)
    }

    /// The string literals directly inside the call whose `(` is just before `from`.
    static func topLevelLiterals(_ text: [Character], from: Int) -> [String] {
        var literals: [String] = []
        var depth = 0
        var index = from
        while index < text.count {
            switch text[index] {
            case "\"":
                guard let (literal, end) = literal(text, from: index) else { return literals }
                if depth == 0 { literals.append(literal) }
                index = end
                continue
            case "(", "[", "{": depth += 1
            case ")", "]", "}":
                if depth == 0 { return literals }
                depth -= 1
            default: break
            }
            index += 1
        }
        return literals
    }

    /// The literal opening at `from` (a `"`), with each interpolation as `{}` and `\"` as `"`;
    /// and the index after its closing quote.
    static func literal(_ text: [Character], from: Int) -> (String, Int)? {
        guard from < text.count, text[from] == "\"" else { return nil }
        var value = ""
        var index = from + 1
        while index < text.count {
            let character = text[index]
            if character == "\"" { return (value, index + 1) }
            if character == "\n" { return nil }
            if character == "\\", index + 1 < text.count {
                if text[index + 1] == "(" {
                    // Skip the interpolation, parentheses and all.
                    var depth = 0
                    index += 2
                    while index < text.count, !(text[index] == ")" && depth == 0) {
                        if text[index] == "(" { depth += 1 } else if text[index] == ")" { depth -= 1 }
                        index += 1
                    }
                    value += "{}"
                } else {
                    value.append(text[index + 1])
                    index += 1
                }
            } else {
                value.append(character)
            }
            index += 1
        }
        return nil
    }
}
