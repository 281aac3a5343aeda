import Foundation
import LedgerAccounts
import LedgerDelivery
import Testing

/// The emails written in Georgian and Russian so far: every part (subject, text, HTML with its
/// layout and footer, the service's words) in the language, none of the English copy left in it.
@Suite("Emails in Georgian and Russian")
struct LocalizedEmailTests {
    /// Phrases of the English copy (the templates, the layout, the footer, the service's words).
    static let english = ["Verify", "password", "link", "expire", "Questions", "button", "email because", "minutes", "ignore"]

    static let written = [
        "verify_email", "password_reset", "reauth_link", "email_change_confirm", "email_add_confirm", "email_change_notice",
    ]

    @Test("the emails written so far render whole in ka and ru", arguments: written)
    func wholeInTheLanguage(_ name: String) throws {
        let templates = try MessageTemplates()
        let scripts: [String: ClosedRange<UInt32>] = ["ka": 0x10D0...0x10FF, "ru": 0x0400...0x04FF]
        for (locale, script) in scripts {
            let email = try templates.email(MessageTemplates.sample(name, locale: locale))
            // The link itself is the one English-looking thing allowed: it is a URL.
            // What a reader sees: the HTML without its tags (attributes such as `id="link"` are not copy).
            let visibleHTML = email.html.replacingOccurrences(of: "<[^>]+>", with: " ", options: .regularExpression)
            let withoutLink = [email.subject, email.text, visibleHTML].joined(separator: "\n")
                .replacingOccurrences(of: "https://[^\\s\"<]+", with: "", options: .regularExpression)
            for phrase in Self.english {
                #expect(!withoutLink.contains(phrase), "\(name).\(locale) still says \"\(phrase)\"")
            }
            #expect(email.subject.unicodeScalars.contains { script.contains($0.value) }, "\(name).\(locale): \(email.subject)")
            #expect(email.html.contains("<html lang=\"\(locale)\">"))
            if name != "email_change_notice" { #expect(email.text.contains(locale == "ka" ? "30 წუთი" : "30 минут")) }
        }
    }

    @Test("an email not written in Georgian yet is English whole, its layout and footer too: never half and half")
    func notYetWrittenStaysEnglish() throws {
        let templates = try MessageTemplates()
        for name in ["new_sign_in", "method_added", "two_factor_changed"] {
            let email = try templates.email(MessageTemplates.sample(name, locale: "ka"))
            let all = [email.subject, email.text, email.html].joined(separator: "\n")
            #expect(!all.unicodeScalars.contains { (0x10D0...0x10FF).contains($0.value) }, "\(name): \(all)")
            #expect(email.html.contains("<html lang=\"en\">") && email.text.contains("Questions?"))
        }
    }
}
