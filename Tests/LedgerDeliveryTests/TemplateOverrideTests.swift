import Foundation
import LedgerAccounts
import LedgerDelivery
import Testing

/// `LEDGER_TEMPLATES_DIR`: files that replace built-in ones one by one, and files for a locale,
/// chosen by the message's locale with a fallback to its language, then to English.
@Suite("Template overrides and locales")
struct TemplateOverrideTests {
    /// A fresh folder holding `files`.
    static func folder(_ files: [String: String]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("templates-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, text) in files {
            try Data(text.utf8).write(to: directory.appendingPathComponent(name))
        }
        return directory.path
    }

    static func templates(_ files: [String: String]) throws -> MessageTemplates {
        try MessageTemplates(brand: MessageBrand(), overridesDirectory: try folder(files))
    }

    @Test("a file replaces its built-in one only: the other parts stay built in")
    func byFile() throws {
        let templates = try Self.templates([
            "verify_email.subject.mustache": "Welcome to {{brand_name}}: confirm your address\n",
            "otp.sms.mustache": "{{code}} is your {{brand_name}} code\n",
            "README.txt": "not a template",
        ])
        let email = try templates.email(MessageTemplates.sample("verify_email"))
        #expect(email.subject == "Welcome to 321Fit: confirm your address")
        #expect(email.text.hasPrefix("Verify your email\n"))
        #expect(try templates.sms(MessageTemplates.sample("otp", channel: .sms)) == "482915 is your 321Fit code")
        #expect(try templates.email(MessageTemplates.sample("password_reset")).subject == "Reset your 321Fit password")
    }

    @Test("a locale's files are chosen by the message's locale: en-GB, then en, then unlocalised, then built in")
    func byLocale() throws {
        let templates = try Self.templates([
            "verify_email.ka.subject.mustache": "დაადასტურეთ ელფოსტა",
            "verify_email.ka.text.mustache": "გახსენით ბმული: {{link}}\n{{> footer}}",
            "footer.ka.text.mustache": "{{brand_name}} · {{support_email}}",
            "verify_email.ka.html.mustache": "{{<layout}}{{$heading}}დაადასტურეთ{{/heading}}{{$action}}დადასტურება{{/action}}{{/layout}}",
            "layout.ka.html.mustache":
                "<html lang=\"{{lang}}\"><h1>{{$heading}}{{/heading}}</h1><a href=\"{{link}}\">{{$action}}{{/action}}</a></html>",
            "verify_email.en-gb.subject.mustache": "Verify your e-mail (GB)",
            "verify_email.en.subject.mustache": "Verify your email (en)",
            "password_reset.subject.mustache": "Reset (unlocalised override)",
        ])
        let georgian = try templates.email(MessageTemplates.sample("verify_email", locale: "ka"))
        #expect(georgian.subject == "დაადასტურეთ ელფოსტა")
        #expect(georgian.text.hasPrefix("გახსენით ბმული: https://321.fit/verify-email?token="))
        #expect(georgian.text.hasSuffix("321Fit · support@321.fit\n"))
        #expect(georgian.html.hasPrefix("<html lang=\"ka\"><h1>დაადასტურეთ</h1><a href=\"https://321.fit/verify-email?token="))
        // Region and case and underscores: ka_GE takes ka's files.
        #expect(try templates.email(MessageTemplates.sample("verify_email", locale: "KA_ge")).subject == "დაადასტურეთ ელფოსტა")

        #expect(try templates.email(MessageTemplates.sample("verify_email", locale: "en-GB")).subject == "Verify your e-mail (GB)")
        let american = try templates.email(MessageTemplates.sample("verify_email", locale: "en-US"))
        #expect(american.subject == "Verify your email (en)")
        // No English HTML override: the built-in one, in English.
        #expect(american.html.contains("<html lang=\"en\">"))
        // A locale without files: the unlocalised override, else the built-in English.
        #expect(try templates.email(MessageTemplates.sample("password_reset", locale: "de")).subject == "Reset (unlocalised override)")
        let german = try templates.email(MessageTemplates.sample("new_sign_in", locale: "de-AT"))
        #expect(german.subject == "New sign-in to your 321Fit account" && german.html.contains("<html lang=\"en\">"))
        // Not a language tag: English, and nothing looked up from it.
        #expect(try templates.email(MessageTemplates.sample("verify_email", locale: "../ka")).subject == "Verify your email for 321Fit")
    }

    @Test("a file that links out of the folder, or is no regular file, stops the start, naming it; a link to a file inside is read")
    func linksOut() throws {
        let outside = try Self.folder(["secret.mustache": "PRIVATE KEY {{code}}\n"])
        let folder = try Self.folder(["shared.mustache": "{{code}} is your {{brand_name}} code\n"])
        let manager = FileManager.default
        try manager.createSymbolicLink(atPath: folder + "/otp.ka.sms.mustache", withDestinationPath: folder + "/shared.mustache")
        var message = MessageTemplates.sample("otp", channel: .sms)
        message.locale = "ka"
        #expect(try MessageTemplates(brand: MessageBrand(), overridesDirectory: folder).sms(message) == "482915 is your 321Fit code")
        try manager.createSymbolicLink(atPath: folder + "/otp.sms.mustache", withDestinationPath: outside + "/secret.mustache")
        do {
            _ = try MessageTemplates(brand: MessageBrand(), overridesDirectory: folder)
            Issue.record("a template linking out of the folder was read")
        } catch let error as TemplateError {
            #expect(error.description.contains("otp.sms.mustache") && error.description.contains("outside the folder"))
            #expect(!error.description.contains("PRIVATE"))
        }
        // Through a relative link that climbs out, too.
        try manager.removeItem(atPath: folder + "/otp.sms.mustache")
        try manager.createSymbolicLink(
            atPath: folder + "/otp.sms.mustache",
            withDestinationPath: "../" + URL(fileURLWithPath: outside).lastPathComponent + "/secret.mustache")
        #expect(throws: TemplateError.self) { try MessageTemplates(brand: MessageBrand(), overridesDirectory: folder) }
        // A FIFO named like a template stops the start at once instead of hanging it.
        try manager.removeItem(atPath: folder + "/otp.sms.mustache")
        #expect(mkfifo(folder + "/otp.sms.mustache", 0o600) == 0)
        #expect(throws: TemplateError.self) { try MessageTemplates(brand: MessageBrand(), overridesDirectory: folder) }
    }

    @Test("an override that does not parse stops the start, naming its file")
    func invalidOverride() throws {
        let error = try #require(throws: TemplateError.self) {
            try Self.templates(["new_sign_in.html.mustache": "<p>\n{{#device}}{{device}}\n"])
        }
        #expect(error.file == "new_sign_in.html.mustache")
        if case .invalid = error.reason {} else { Issue.record("\(error.reason)") }
        #expect(throws: TemplateError.self) { try MessageTemplates(brand: MessageBrand(), overridesDirectory: "/nonexistent/templates") }
    }

    @Test("an override showing a field the message lacks throws at render, naming the file and field only")
    func misspeltField() throws {
        let templates = try Self.templates(["otp.sms.mustache": "{{brand_name}} code: {{cod}}"])
        let error = try #require(throws: TemplateError.self) { try templates.sms(MessageTemplates.sample("otp", channel: .sms)) }
        #expect(error.file == "otp.sms.mustache" && error.reason == .missingField("cod"))
        #expect(!error.description.contains("482915"))
        // In a section, a field is optional: the section shows only when it is there.
        let optional = try Self.templates(["otp.sms.mustache": "{{brand_name}} code: {{code}}{{#device}} on {{device}}{{/device}}"])
        #expect(try optional.sms(MessageTemplates.sample("otp", channel: .sms)) == "321Fit code: 482915")
        // A partial the file includes must exist.
        let partial = try Self.templates(["otp.sms.mustache": "{{> signature}} {{code}}"])
        let missing = try #require(throws: TemplateError.self) { try partial.sms(MessageTemplates.sample("otp", channel: .sms)) }
        #expect(missing.file == "signature.sms.mustache" && missing.reason == .missing)
    }

    @Test("a subject stays on one line, whatever a field holds")
    func subjectOneLine() throws {
        let templates = try Self.templates(["new_sign_in.subject.mustache": "Sign-in from\n{{device}}\n"])
        var message = MessageTemplates.sample("new_sign_in")
        message.details?["device"] = "Evil\r\nBcc: victim@mail.com"
        let subject = try templates.email(message).subject
        #expect(subject == "Sign-in from Evil Bcc: victim@mail.com")
        #expect(!subject.contains("\r") && !subject.contains("\n"))
    }
}
