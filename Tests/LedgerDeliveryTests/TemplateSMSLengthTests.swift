import Foundation
import LedgerAccounts
import LedgerDelivery
import Testing

/// Every built-in SMS is plain GSM-7 and one segment (160 characters) with realistic values:
/// the longest month, each method, the default brand and support address.
@Suite("Template SMS length")
struct TemplateSMSLengthTests {
    @Test("GSM-7 counts: the basic table one each, the extension table two, anything else UCS-2")
    func counting() {
        #expect(GSM7.length("321Fit code: 482915.") == 20)
        #expect(GSM7.length("[€]") == 6)
        #expect(GSM7.length("Ünïcode") == nil)
        #expect(GSM7.length("a\r\nb") == 4)
        #expect(GSM7.length("iPhone · 321Fit") == nil, "the middle dot of device labels is not GSM-7")
        #expect(GSM7.segments(String(repeating: "a", count: 160)) == 1)
        #expect(GSM7.segments(String(repeating: "a", count: 161)) == 2)
        #expect(GSM7.segments(String(repeating: "ა", count: 70)) == 1)
        #expect(GSM7.segments(String(repeating: "ა", count: 71)) == 2)
    }

    @Test(
        "every built-in SMS fits one GSM-7 segment",
        arguments: [
            "otp", "method_added", "method_removed", "password_changed", "passkey_suspect", "two_factor_changed", "changed_by_support",
        ])
    func oneSegment(_ name: String) throws {
        let templates = try MessageTemplates()
        // 28 September 2026, 23:59 UTC: the longest readable time.
        let late = Date(timeIntervalSince1970: 1_790_639_940)
        for method in ["phone", "email", "apple", "google"] {
            var message = MessageTemplates.sample(name, channel: .sms, now: late)
            if message.details?["method"] != nil { message.details?["method"] = method }
            // A person's own device name, outside GSM-7: the texts must not show it.
            if message.details?["device"] != nil { message.details?["device"] = "Ana’s iPhone · 321Fit 4.2" }
            let text = try templates.sms(message)
            let length = try #require(GSM7.length(text), "\(name): not GSM-7: \(text)")
            #expect(length <= 160, "\(name) (\(method)): \(length) characters: \(text)")
            #expect(!text.contains("<") && !text.contains("\n"), "\(name): plain, one line")
            if name != "otp" {
                #expect(text.contains("28 September 2026, 23:59 UTC"), "\(name): \(text)")
                #expect(text.contains("support@321.fit"))
            }
        }
    }

    /// Every SMS template in every language, with the longest values: Georgian and Russian go
    /// as UCS-2 (70 characters to a segment, 67 to each part of a longer text).
    static let smsTemplates = [
        "otp", "method_added", "method_removed", "password_changed", "passkey_suspect", "two_factor_changed", "changed_by_support",
    ]

    @Test("segments of every SMS in ka, en and ru: a sign-in code is one segment in each; a notice at most three", arguments: smsTemplates)
    func segmentsInEveryLanguage(_ name: String) throws {
        let templates = try MessageTemplates()
        let late = Date(timeIntervalSince1970: 1_790_639_940)
        let months = ["ka": "28 სექტემბერი 2026, 23:59 UTC", "en": "28 September 2026, 23:59 UTC", "ru": "28 сентября 2026, 23:59 UTC"]
        let scripts: [String: ClosedRange<UInt32>] = ["ka": 0x10D0...0x10FF, "ru": 0x0400...0x04FF]
        for locale in ["ka", "en", "ru"] {
            for method in ["phone", "email", "apple", "google", "passkey"] {
                var message = MessageTemplates.sample(name, channel: .sms, locale: locale, now: late)
                if message.details?["method"] != nil { message.details?["method"] = method }
                let text = try templates.sms(message)
                let segments = GSM7.segments(text)
                #expect(segments <= (name == "otp" ? 1 : 3), "\(name).\(locale) (\(method)): \(segments) segments: \(text)")
                if let script = scripts[locale] {
                    #expect(text.unicodeScalars.contains { script.contains($0.value) }, "\(name).\(locale) is not in its language: \(text)")
                }
                if name == "otp" {
                    #expect(text.contains("482915"))
                } else {
                    #expect(text.contains(months[locale]!), "\(name).\(locale): \(text)")
                    #expect(text.contains("support@321.fit"))
                }
            }
        }
    }
}
