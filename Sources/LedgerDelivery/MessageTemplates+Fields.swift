import Foundation
import LedgerAccounts
import LedgerCore

/// The fields a template sees.
///
/// Every template: `brand_name`, `brand_url`, `brand_color` (`#rrggbb`), `brand_button_text_color`
/// and `brand_text_color` (readable on and beside the brand colour), `support_email`,
/// `secure_account` (what an alert tells a person who did not do it), `code_expires_in`,
/// `link_expires_in` and `revert_expires_in` ("5 minutes", "30 minutes", "7 days", from the
/// service's settings) and, in HTML, `lang`.
///
/// Per message, when it has them: `code`, `link`, `device` (the session's label, as the
/// sessions screen shows it), `time` (when it happened: `signed_in_at`, `changed_at`,
/// `reached_at` or `detected_at`, as "12 May 2026, 14:03 UTC"), `until` (`paused_until`, the same way), `method`
/// (readable: "Sign in with Google", "your phone number", "your email address", "an
/// authenticator app"); and every `details` entry under its own name (`message`, `change`,
/// `during`, the raw timestamps…), with, for one that is a word such as `change: enabled`, a
/// flag `change_enabled` a section can test (`{{#change_enabled}}…{{/change_enabled}}`).
extension MessageTemplates {
    func fields(for message: OutboxMessage) -> [String: Any] {
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
        fields["secure_account"] = details["secure_account"] ?? ImpliedMessages.secureAccountAdvice
        fields["lang"] = "en"
        fields["code_expires_in"] = MessageLifetimes.readable(lifetimes.codeSeconds)
        fields["link_expires_in"] = MessageLifetimes.readable(lifetimes.linkSeconds)
        fields["revert_expires_in"] = MessageLifetimes.readable(lifetimes.revertSeconds)
        if let code = message.code { fields["code"] = code }
        if let link = message.link { fields["link"] = link }
        if let time = ["signed_in_at", "changed_at", "reached_at", "detected_at"].lazy.compactMap({ details[$0].flatMap(Self.readableTime) }
        ).first {
            fields["time"] = time
        }
        if let until = details["paused_until"].flatMap(Self.readableTime) { fields["until"] = until }
        if let method = details["method"] { fields["method"] = Self.readableMethod(method) }
        return fields
    }

    /// A detail that names a case (`enabled`, `sign_in`, `google`), not a sentence.
    static func isWord(_ value: String) -> Bool {
        !value.isEmpty && value.count <= 40 && value.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }

    /// How a sentence names a sign-in method (`details.method`).
    static func readableMethod(_ method: String) -> String {
        switch method {
        case "phone": "your phone number"
        case "email": "your email address"
        case "apple": "Sign in with Apple"
        case "google": "Sign in with Google"
        case "totp": "an authenticator app"
        case "passkey": "a passkey"
        default: method
        }
    }

    static let monthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
    ]

    /// An RFC 3339 timestamp as a person reads it, in UTC: "12 May 2026, 14:03 UTC". Day, month
    /// name and a 24-hour clock read the same on both sides of the Atlantic, and every
    /// character is in GSM-7 (an SMS stays one segment).
    static func readableTime(_ timestamp: String) -> String? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = formatter.date(from: timestamp) ?? ISO8601DateFormatter().date(from: timestamp) else { return nil }
        let time = UTCTime(date)
        let minute = time.minute < 10 ? "0\(time.minute)" : "\(time.minute)"
        let hour = time.hour < 10 ? "0\(time.hour)" : "\(time.hour)"
        return "\(time.day) \(monthNames[time.month - 1]) \(time.year), \(hour):\(minute) UTC"
    }
}
