import Foundation
import LedgerAccounts
import LedgerDelivery
import Testing

/// Every email in Georgian and Russian: every part (subject, text, HTML with its layout and
/// footer, the service's words) and every variant (each change, action, role) in the language,
/// none of the English copy left in it.
@Suite("Emails in Georgian and Russian")
struct LocalizedEmailTests {
    /// Phrases of the English copy (the templates, the layout, the footer, the service's words).
    static let english = [
        "Verify", "password", "link", "expire", "Questions", "button", "email because", "minutes", "ignore", "When:", "Device:",
        "Sign in", "sign-in", "account", "Our ", "team", "Two-step", "recovery", "revert", "Revert", "passkey", "hours", "If ",
    ]
    static let scripts: [String: ClosedRange<UInt32>] = ["ka": 0x10D0...0x10FF, "ru": 0x0400...0x04FF]
    /// The emails whose link lasts `link_expires_in` (30 minutes by default).
    static let linkEmails: Set = ["verify_email", "password_reset", "reauth_link", "email_change_confirm", "email_add_confirm"]

    static let emails = MessageTemplates.catalog.filter { $0.value.contains(.email) }.keys.sorted()

    /// Every variant of `name`'s sample: one per value of the detail its sections test.
    static func variants(_ name: String, locale: String) -> [OutboxMessage] {
        let sample = MessageTemplates.sample(name, locale: locale)
        let values: (String, [String])? =
            switch name {
            case "two_factor_changed": ("change", ["enabled", "disabled", "recovery_codes_regenerated", "something_new"])
            case "two_factor_limit_reached": ("during", ["sign_in", "reauth"])
            case "changed_by_support":
                ("action", ["signed_out", "password_reset_sent", "two_factor_reset", "method_removed", "disabled", "enabled"])
            case "staff_invitation": ("role", ["admin", "support"])
            default: nil
            }
        guard let (key, options) = values else { return [sample] }
        return options.map { value in
            var message = sample
            message.details?[key] = value
            return message
        }
    }

    @Test("every email renders whole in ka and ru, each of its variants", arguments: emails)
    func wholeInTheLanguage(_ name: String) throws {
        let templates = try MessageTemplates()
        for (locale, script) in Self.scripts {
            var texts: Set<String> = []
            let variants = Self.variants(name, locale: locale)
            for message in variants {
                let email = try templates.email(message)
                texts.insert(email.text)
                // The link itself is the one English-looking thing allowed: it is a URL.
                // What a reader sees: the HTML without its tags (attributes such as `id="link"` are not copy).
                let visibleHTML = email.html.replacingOccurrences(of: "<[^>]+>", with: " ", options: .regularExpression)
                let withoutLink = [email.subject, email.text, visibleHTML].joined(separator: "\n")
                    .replacingOccurrences(of: "https://[^\\s\"<]+", with: "", options: .regularExpression)
                for phrase in Self.english {
                    #expect(!withoutLink.contains(phrase), "\(name).\(locale) \(message.details ?? [:]) still says \"\(phrase)\"")
                }
                #expect(email.subject.unicodeScalars.contains { script.contains($0.value) }, "\(name).\(locale): \(email.subject)")
                #expect(email.html.contains("<html lang=\"\(locale)\">"))
                if Self.linkEmails.contains(name) { #expect(email.text.contains(locale == "ka" ? "30 წუთი" : "30 минут")) }
            }
            // Each variant says something of its own: a section missing in the language would
            // leave two of them the same.
            #expect(texts.count == variants.count, "\(name).\(locale)")
        }
    }

    /// The templates with `files` (name → text) as the operator's overrides.
    static func withOverrides(_ files: [String: String]) throws -> MessageTemplates {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-overrides-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, text) in files { try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        return try MessageTemplates(brand: MessageBrand(), overridesDirectory: folder.path)
    }

    @Test("an override without a locale that built-in Georgian or Russian files come before is named, for serve to warn about")
    func shadowedOverrides() throws {
        let otp = "<#> {{brand_name}} code {{code}} FA+9qCX9VSu\n"
        var templates = try Self.withOverrides(["otp.sms.mustache": otp])
        #expect(templates.shadowedOverrides.map(\.file) == ["otp.sms.mustache"])
        #expect(templates.shadowedOverrides.first?.builtIn == ["otp.ka.sms.mustache", "otp.ru.sms.mustache"])
        // A Georgian one of the operator's own: only the Russian built-in is left to say.
        templates = try Self.withOverrides(["otp.sms.mustache": otp, "otp.ka.sms.mustache": otp])
        #expect(templates.shadowedOverrides.map(\.file) == ["otp.sms.mustache"])
        #expect(templates.shadowedOverrides.first?.builtIn == ["otp.ru.sms.mustache"])
        #expect(try MessageTemplates().shadowedOverrides.isEmpty)
    }

    @Test("an email not written in a language is English whole, its layout and footer too: never half and half")
    func notWrittenStaysEnglish() throws {
        // A footer in German, and no email in German: the English email keeps its English footer.
        let templates = try Self.withOverrides(["footer.de.text.mustache": "--\nFragen? Schreiben Sie uns.\n"])
        for name in ["new_sign_in", "method_added", "two_factor_changed"] {
            let email = try templates.email(MessageTemplates.sample(name, locale: "de"))
            #expect(!email.text.contains("Fragen"), "\(name): \(email.text)")
            #expect(email.html.contains("<html lang=\"en\">") && email.text.contains("Questions?"))
        }
    }
}
