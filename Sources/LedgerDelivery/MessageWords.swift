import Foundation
import LedgerAccounts
import LedgerCore
import LedgerIdentity

/// The words the service puts into a message besides its template's (docs/accounts.md
/// "Languages"): how long a code or link works, when something happened, a sign-in method's
/// name, and the advice an alert ends with, in the message's language. Templates stay free of
/// grammar: a Russian count takes its noun's form here ("1 минуту", "3 минуты", "5 минут").
struct MessageWords: Sendable {
    let language: Language

    /// The words of `locale`'s language (`ka-GE` is Georgian), English for any other.
    init(locale: String) {
        language = Language(tag: locale) ?? .en
    }

    /// `seconds` in the largest whole unit, as "it works for …" says it: "5 minutes",
    /// "5 წუთი", "5 минут" (`Language.duration`).
    func duration(_ seconds: Int) -> String {
        language.duration(seconds)
    }

    /// An RFC 3339 timestamp as a person reads it, in UTC: "12 May 2026, 14:03 UTC",
    /// "12 მაისი 2026, 14:03 UTC", "12 мая 2026, 14:03 UTC". English's characters are all GSM-7.
    func time(_ timestamp: String) -> String? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = formatter.date(from: timestamp) ?? ISO8601DateFormatter().date(from: timestamp) else { return nil }
        let time = UTCTime(date)
        let minute = time.minute < 10 ? "0\(time.minute)" : "\(time.minute)"
        let hour = time.hour < 10 ? "0\(time.hour)" : "\(time.hour)"
        return "\(time.day) \(Self.months[language]![time.month - 1]) \(time.year), \(hour):\(minute) UTC"
    }

    /// Month names as a date says them (Russian's in the genitive: "12 мая").
    static let months: [Language: [String]] = [
        .en: ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"],
        .ka: [
            "იანვარი", "თებერვალი", "მარტი", "აპრილი", "მაისი", "ივნისი", "ივლისი", "აგვისტო", "სექტემბერი", "ოქტომბერი", "ნოემბერი",
            "დეკემბერი",
        ],
        .ru: ["января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября", "октября", "ноября", "декабря"],
    ]

    /// How a message names a sign-in method (`details.method`); an unknown one as it is.
    func method(_ method: String) -> String {
        Self.methods[language]![method] ?? method
    }

    static let methods: [Language: [String: String]] = [
        .en: [
            "phone": "your phone number", "email": "your email address", "apple": "Sign in with Apple",
            "google": "Sign in with Google", "totp": "an authenticator app", "passkey": "a passkey",
        ],
        .ka: [
            "phone": "ტელეფონის ნომერი", "email": "ელფოსტის მისამართი", "apple": "Apple", "google": "Google",
            "totp": "ავთენტიფიკატორი აპლიკაცია", "passkey": "წვდომის გასაღები",
        ],
        .ru: [
            "phone": "номер телефона", "email": "адрес электронной почты", "apple": "Apple", "google": "Google",
            "totp": "приложение-аутентификатор", "passkey": "ключ доступа",
        ],
    ]

    /// What an alert tells a person who did not do what it reports.
    var secureAccount: String {
        switch language {
        case .en: ImpliedMessages.secureAccountAdvice
        case .ka: "თუ ეს თქვენ არ იყავით, შეცვალეთ პაროლი და გამოდით ანგარიშიდან სხვა მოწყობილობებზე: პარამეტრები → შესვლა და უსაფრთხოება."
        case .ru: "Если это были не вы, смените пароль и выйдите из аккаунта на других устройствах: «Настройки» → «Вход и безопасность»."
        }
    }
}
