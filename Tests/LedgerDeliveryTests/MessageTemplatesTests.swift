import Foundation
import LedgerAccounts
import LedgerDelivery
import Testing

/// The built-in templates: every message the service sends renders for its channel, with the
/// seeds' words, its code or link, and nothing left of a tag.
@Suite("Message templates")
struct MessageTemplatesTests {
    let templates: MessageTemplates
    /// A fixed moment, so the readable time is known: 12 May 2026, 14:03 UTC.
    static let now = Date(timeIntervalSince1970: 1_778_594_580)

    init() throws {
        templates = try MessageTemplates()
    }

    /// Every template the service sends (grep `template:` and the `*Template` constants of
    /// Sources/LedgerAccounts), and by which channel.
    static let inUse: [String: [OutboxMessage.Channel]] = [
        "otp": [.sms], "verify_email": [.email], "password_reset": [.email], "reauth_link": [.email],
        "email_change_confirm": [.email], "email_change_notice": [.email], "email_changed_notice": [.email],
        "email_removed_notice": [.email], "email_add_confirm": [.email], "new_sign_in": [.email], "two_factor_changed": [.email, .sms],
        "two_factor_limit_reached": [.email], "method_added": [.email, .sms], "method_removed": [.email, .sms],
        "password_changed": [.email, .sms], "passkey_suspect": [.email, .sms], "changed_by_support": [.email, .sms],
        "staff_invitation": [.email],
    ]

    @Test("every template in use is built in, for each of its channels")
    func catalog() {
        #expect(MessageTemplates.catalog == Self.inUse)
        for (name, channels) in Self.inUse {
            #expect(templates.channels(of: name) == channels, "\(name)")
        }
        #expect(templates.channels(of: "no_such_template").isEmpty)
    }

    @Test("every email renders: subject, text and HTML, no tag left, the link in each body", arguments: inUse.keys.sorted())
    func emails(_ name: String) throws {
        guard Self.inUse[name]!.contains(.email) else { return }
        let message = MessageTemplates.sample(name, now: Self.now)
        let email = try templates.email(message)
        #expect(!email.subject.isEmpty && !email.subject.contains("\n"))
        for part in [email.subject, email.text, email.html] {
            #expect(!part.contains("{{") && !part.contains("}}"), "\(name): a tag left")
        }
        #expect(email.subject.contains("321Fit") || email.subject == "Verify it's you", "\(name): \(email.subject)")
        if let link = message.link {
            #expect(email.text.contains(link), "\(name): the text has the link")
            // In HTML, the `&`-free sample link appears as the button's target and written out.
            #expect(email.html.components(separatedBy: "href=\"\(link)\"").count == 3, "\(name): button and visible link")
        }
        #expect(email.html.hasPrefix("<!doctype html>\n<html lang=\"en\">"), "\(name)")
        #expect(email.html.contains("support@321.fit") && email.text.contains("support@321.fit"))
        #expect(!email.html.contains("<img"), "real text, no images")
        #expect(email.text.hasSuffix("\n") && !email.text.hasSuffix("\n\n"))
    }

    @Test("the seeds' words, the code, and the alerts' device and time")
    func copy() throws {
        let sms = try templates.sms(MessageTemplates.sample("otp", channel: .sms))
        #expect(sms == "321Fit code: 482915. It expires in 5 minutes.")

        let changed = try templates.email(MessageTemplates.sample("email_changed_notice", now: Self.now))
        #expect(changed.text.contains("Your email was changed. If this wasn't you, click here to revert."))
        #expect(changed.html.contains("Your email was changed. If this wasn&#39;t you, click here to revert."))
        #expect(changed.subject == "Your 321Fit email was changed")

        let verify = try templates.email(MessageTemplates.sample("verify_email", now: Self.now))
        #expect(verify.text.contains("Verification links expire after 30 minutes."))
        #expect(verify.subject == "Verify your email for 321Fit")

        let reset = try templates.email(MessageTemplates.sample("password_reset", now: Self.now))
        #expect(reset.text.contains("Choose something you'll remember. You'll use it to sign in."))
        let reauth = try templates.email(MessageTemplates.sample("reauth_link", now: Self.now))
        #expect(reauth.text.contains("Changes to your sign-in methods require verification for security."))

        let signIn = try templates.email(MessageTemplates.sample("new_sign_in", now: Self.now))
        #expect(signIn.text.contains("When: 12 May 2026, 14:03 UTC\nDevice: iPhone · 321Fit 4.2"))
        #expect(signIn.html.contains("<strong>Device:</strong> iPhone · 321Fit 4.2"))
        #expect(signIn.text.contains(ImpliedMessages.secureAccountAdvice))

        let added = try templates.email(MessageTemplates.sample("method_added", now: Self.now))
        #expect(added.text.contains("A new way to sign in was added to your 321Fit account: Sign in with Google."))
        var phone = MessageTemplates.sample("method_removed", now: Self.now)
        phone.details?["method"] = "phone"
        #expect(try templates.email(phone).text.contains("removed from your 321Fit account: your phone number."))

        let limit = try templates.email(MessageTemplates.sample("two_factor_limit_reached", now: Self.now))
        #expect(limit.text.contains("refused until 13 May 2026, 14:03 UTC"))
        #expect(limit.text.contains("while signing in"))
        for (change, words) in [
            ("enabled", "was turned on"), ("disabled", "was turned off"), ("recovery_codes_regenerated", "New recovery codes"),
            ("something_new", "changed."),
        ] {
            var message = MessageTemplates.sample("two_factor_changed", now: Self.now)
            message.details?["change"] = change
            let email = try templates.email(message)
            #expect(email.text.contains(words), "\(change)")
            #expect(email.text.components(separatedBy: "321Fit account").count == 2, "\(change): one sentence about the change")
        }
    }

    @Test("a hostile device label is escaped in HTML and kept as text in the plain body")
    func escaping() throws {
        var message = MessageTemplates.sample("new_sign_in", now: Self.now)
        message.details?["device"] = "<script>alert(1)</script> \"quoted\" & 'single'"
        let email = try templates.email(message)
        #expect(!email.html.contains("<script>"))
        #expect(email.html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &quot;quoted&quot; &amp; &#39;single&#39;"))
        #expect(email.text.contains("<script>alert(1)</script> \"quoted\" & 'single'"))

        // A link's `&` is escaped in the attribute (the browser reads it back as `&`).
        var link = MessageTemplates.sample("verify_email")
        link.link = "https://321.fit/verify-email?token=a&b=\"><script>"
        let html = try templates.email(link).html
        #expect(html.contains("href=\"https://321.fit/verify-email?token=a&amp;b=&quot;&gt;&lt;script&gt;\""))
        #expect(!html.contains("<script>"))
    }

    @Test("a device label with line breaks (from an event written before labels were cleaned) shows as one line in the text body")
    func oneLineDetails() throws {
        var message = MessageTemplates.sample("new_sign_in", now: Self.now)
        message.details?["device"] = "iPhone\r\n\r\nReply with your code to secure your account\u{1B}[8m"
        let text = try templates.email(message).text
        #expect(text.contains("iPhone    Reply with your code to secure your account [8m"))
        #expect(!text.contains("\r") && !text.contains("\u{1B}"))
    }

    @Test("a link that is not http(s) is refused, naming the file and not the link")
    func unsafeLink() throws {
        var message = MessageTemplates.sample("verify_email")
        message.link = "javascript:alert(document.cookie)"
        let error = try #require(throws: TemplateError.self) { try templates.email(message) }
        #expect(error.reason == .unsafeLink)
        #expect(error.file == "verify_email.subject.mustache")
        #expect(!error.description.contains("javascript"))
    }

    @Test("a missing template or field throws, naming the file and never the code or link")
    func failures() throws {
        let missing = try #require(throws: TemplateError.self) { try templates.email(MessageTemplates.sample("otp")) }
        #expect(missing.reason == .missing && missing.file == "otp.subject.mustache")
        #expect(throws: TemplateError.self) { try templates.sms(MessageTemplates.sample("verify_email", channel: .sms)) }

        var codeless = MessageTemplates.sample("otp", channel: .sms)
        codeless.code = nil
        let field = try #require(throws: TemplateError.self) { try templates.sms(codeless) }
        #expect(field.reason == .missingField("code"))
        #expect(field.description == "message template otp.sms.mustache (built-in) shows the field code, which the message does not have")

        let delivery = DeliveryError(field)
        #expect(delivery.kind == .configuration)
    }

    @Test("the lifetimes the copy states are the service's settings")
    func lifetimes() throws {
        let short = try MessageTemplates(
            brand: MessageBrand(), lifetimes: MessageLifetimes(codeSeconds: 600, linkSeconds: 3600, revertSeconds: 86400))
        #expect(try short.sms(MessageTemplates.sample("otp", channel: .sms)) == "321Fit code: 482915. It expires in 10 minutes.")
        #expect(try short.email(MessageTemplates.sample("verify_email")).text.contains("Verification links expire after 1 hour."))
        #expect(try short.email(MessageTemplates.sample("password_reset")).html.contains("The link expires after 1 hour and works once."))
        #expect(try short.email(MessageTemplates.sample("email_changed_notice")).text.contains("The link works for 1 day."))
        #expect(try templates.email(MessageTemplates.sample("email_removed_notice")).text.contains("The link works for 7 days."))
        let odd = try MessageTemplates(brand: MessageBrand(), lifetimes: MessageLifetimes(codeSeconds: 90))
        #expect(try odd.sms(MessageTemplates.sample("otp", channel: .sms)).hasSuffix("It expires in 90 seconds."))
    }

    @Test("the brand: name, URL and colour in every email, and text that reads on a light colour")
    func brand() throws {
        let handz = try MessageTemplates(
            brand: MessageBrand(name: "Handz", url: "https://handz.app", color: "#FFEB3B"), supportEmail: "help@handz.app")
        let email = try handz.email(MessageTemplates.sample("verify_email"))
        #expect(email.subject == "Verify your email for Handz")
        #expect(email.html.contains("href=\"https://handz.app\""))
        #expect(email.html.contains("background-color:#ffeb3b;color:#111827;"), "dark text on a yellow button")
        #expect(email.text.contains("help@handz.app") && !email.text.contains("321Fit"))
        #expect(try handz.sms(MessageTemplates.sample("otp", channel: .sms)) == "Handz code: 482915. It expires in 5 minutes.")

        let blue = try MessageBrand()
        #expect(blue.buttonTextColor == "#ffffff" && blue.textColor == "#1d4ed8")
        let yellow = try MessageBrand(color: "#fe3")
        #expect(yellow.color == "#ffee33" && yellow.buttonTextColor == "#111827" && yellow.textColor == "#1f2937")
        #expect(throws: MessageBrand.Invalid.self) { try MessageBrand(color: "red;background:url(x)") }
        #expect(throws: MessageBrand.Invalid.self) { try MessageBrand(url: "javascript:alert(1)") }
        #expect(throws: MessageBrand.Invalid.self) { try MessageBrand(name: " ") }
    }
}
