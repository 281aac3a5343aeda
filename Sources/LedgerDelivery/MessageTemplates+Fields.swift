import Foundation
import LedgerAccounts
import LedgerCore

/// The fields a template sees.
///
/// Every template: `brand_name`, `brand_url`, `brand_color` (`#rrggbb`), `brand_button_text_color`
/// and `brand_text_color` (readable on and beside the brand colour), `support_email`,
/// `secure_account` (what an alert tells a person who did not do it), `code_expires_in`,
/// `link_expires_in` and `revert_expires_in` ("5 minutes", "30 minutes", "7 days", from the
/// service's settings) and, in HTML, `lang`. The service's words are in the message's language
/// (`MessageWords`).
///
/// Per message, when it has them: `code`, `link`, `device` (the session's label, as the
/// sessions screen shows it), `time` (when it happened: `signed_in_at`, `changed_at`,
/// `reached_at` or `detected_at`, as "12 May 2026, 14:03 UTC"), `until` (`paused_until`, the same way), `method`
/// (readable: "Sign in with Google", "your phone number", "your email address", "an
/// authenticator app"); and every `details` entry under its own name (`message`, `change`,
/// `during`, the raw timestamps…), with, for one that is a word such as `change: enabled`, a
/// flag `change_enabled` a section can test (`{{#change_enabled}}…{{/change_enabled}}`).
extension MessageTemplates {
    /// The fields of `message` for a file in `locale` (nil: an unlocalised, English file): the
    /// service's words are the file's language, so an English file never shows Russian ones.
    func fields(for message: OutboxMessage, in locale: String?) -> [String: Any] {
        var fields: [String: Any] = [:]
        let details = message.details ?? [:]
        for (key, value) in details {
            // Details quote what requests said (a device's label): one line each, so a plain-text
            // message or an SMS shows no line the service did not write.
            let value = ProviderErrorText.singleLine(value)
            fields[key] = value
            if Self.isWord(value) { fields["\(key)_\(value)"] = true }
        }
        fields["brand_name"] = brand.name
        fields["brand_url"] = brand.url
        fields["brand_color"] = brand.color
        fields["brand_button_text_color"] = brand.buttonTextColor
        fields["brand_text_color"] = brand.textColor
        fields["support_email"] = supportEmail
        // The service's own words in the message's language (`MessageWords`); the advice the
        // accounts layer wrote is its English.
        let words = MessageWords(locale: locale ?? "en")
        fields["secure_account"] = words.language == .en ? details["secure_account"] ?? words.secureAccount : words.secureAccount
        fields["lang"] = "en"
        fields["code_expires_in"] = words.duration(lifetimes.codeSeconds)
        fields["link_expires_in"] = words.duration(lifetimes.linkSeconds)
        fields["revert_expires_in"] = words.duration(lifetimes.revertSeconds)
        if let code = message.code { fields["code"] = code }
        if let link = message.link { fields["link"] = link }
        if let time = ["signed_in_at", "changed_at", "reached_at", "detected_at"].lazy.compactMap({ details[$0].flatMap(words.time) }).first
        {
            fields["time"] = time
        }
        if let until = details["paused_until"].flatMap(words.time) { fields["until"] = until }
        if let method = details["method"] { fields["method"] = words.method(method) }
        return fields
    }

    /// A detail that names a case (`enabled`, `sign_in`, `google`), not a sentence.
    static func isWord(_ value: String) -> Bool {
        !value.isEmpty && value.count <= 40 && value.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }

}
