import Foundation
import LedgerIdentity

/// The words of the link pages, in one language: Georgian, English and Russian (`byLanguage`),
/// chosen by `Accept-Language`.
struct LinkPageCopy: Sendable {
    /// What one page says: before the form, on its button, and once done.
    struct Page: Sendable {
        let title: String
        let lead: String
        let button: String
        let done: String
        /// The expired page's explanation.
        let expired: String
    }

    let lang: String
    let installTitle: String
    let installText: String
    /// The same, for a link only the app can finish.
    let installTextAppOnly: String
    let expiredTitle: String
    let newPasswordLabel: String
    let confirmPasswordLabel: String
    let rules: [String]
    let mismatch: String
    /// What a page says when the service failed in a way it did not expect.
    let unexpected: String
    /// The sign-in methods as a page names them (`phone`, `apple`, `google`, `passkey`).
    let methodNames: [String: String]
    /// "We also removed …" and "Two-step verification is off." after a reset or revert.
    let removedLead: String
    let twoFactorOff: String
    let pages: [LinkPages.Kind: Page]

    static let english = LinkPageCopy(
        lang: "en", installTitle: "Install the app to continue",
        installText: "On a phone with the app, this link opens it. You can also finish here.",
        installTextAppOnly: "On the phone where you use the app, this link opens it.",
        expiredTitle: "This link has expired", newPasswordLabel: "New password", confirmPasswordLabel: "Confirm new password",
        rules: ["At least 8 characters", "Not a common password", "Not all numbers"], mismatch: "Passwords don't match.",
        unexpected: "Something went wrong on our side. Open the link again in a moment.",
        methodNames: [
            "phone": "your phone number", "apple": "Sign in with Apple", "google": "Sign in with Google", "passkey": "a passkey",
        ],
        removedLead: "To keep out whoever else had access, we also removed:",
        twoFactorOff: "Two-step verification is off: turn it on again in Settings once you're signed in.",
        pages: [
            .verifyEmail: Page(
                title: "Verify your email", lead: "Confirm that this address is yours.", button: "Verify email",
                done: "Your email is verified. You can go back to the app.",
                expired: "Verification links expire after 30 minutes. Request a new one to try again."),
            .resetPassword: Page(
                title: "Set a new password", lead: "Choose something you'll remember. You'll use it to sign in.",
                button: "Set new password", done: "Password updated. Sign in with your new password.",
                expired: "Password reset links expire after 30 minutes. Request a new one to try again."),
            .confirmEmailChange: Page(
                title: "Confirm your new email",
                lead: "Use this address to sign in from now on. "
                    + "If you didn't ask to add or change an email address, close this page: nothing changes.",
                button: "Confirm new email",
                done: "Your new email address is confirmed. You can go back to the app.",
                expired: "Email change links expire after 30 minutes. Request a new one to try again."),
            .revertEmail: Page(
                title: "Undo the email change",
                lead:
                    "If you didn't change or remove your email, put your address back and choose a new password. Every device will be signed out.",
                button: "Restore my email",
                done: "Your email address is back and you are signed out everywhere. Sign in with your new password.",
                expired: "Links to undo an email change expire after 7 days. Contact support if you need help."),
            .reauth: Page(
                title: "Confirm it's you",
                lead: "Open this link on the phone where you asked to confirm it's you: the app finishes the check there.",
                button: "", done: "",
                expired: "Links to confirm it's you expire after 30 minutes. Ask for a new one in the app."),
        ])

    static let georgian = LinkPageCopy(
        lang: "ka", installTitle: "გასაგრძელებლად დააინსტალირეთ აპლიკაცია",
        installText: "ტელეფონზე, სადაც აპლიკაცია გაქვთ, ეს ბმული აპლიკაციაში გაიხსნება. შეგიძლიათ აქვე დაასრულოთ.",
        installTextAppOnly: "გახსენით ეს ბმული იმ ტელეფონზე, სადაც აპლიკაციით სარგებლობთ.",
        expiredTitle: "ბმულს ვადა გაუვიდა", newPasswordLabel: "ახალი პაროლი", confirmPasswordLabel: "გაიმეორეთ ახალი პაროლი",
        rules: ["მინიმუმ 8 სიმბოლო", "არ უნდა იყოს გავრცელებული პაროლი", "არ უნდა შედგებოდეს მხოლოდ ციფრებისგან"],
        mismatch: "პაროლები არ ემთხვევა.",
        unexpected: "ჩვენს მხარეს რაღაც შეცდომა მოხდა. ცოტა ხანში ბმული ხელახლა გახსენით.",
        methodNames: [
            "phone": "ტელეფონის ნომერი", "apple": "Apple-ით შესვლა", "google": "Google-ით შესვლა", "passkey": "წვდომის გასაღები",
        ],
        removedLead: "სხვებისთვის წვდომის შესაწყვეტად ასევე წავშალეთ:",
        twoFactorOff: "ორეტაპიანი დადასტურება გამორთულია: შესვლის შემდეგ ხელახლა ჩართეთ პარამეტრებში.",
        pages: [
            .verifyEmail: Page(
                title: "დაადასტურეთ ელფოსტა", lead: "დაადასტურეთ, რომ ეს მისამართი თქვენია.", button: "ელფოსტის დადასტურება",
                done: "ელფოსტა დადასტურებულია. შეგიძლიათ დაბრუნდეთ აპლიკაციაში.",
                expired: "დადასტურების ბმული 30 წუთი მოქმედებს. მოითხოვეთ ახალი და სცადეთ ხელახლა."),
            .resetPassword: Page(
                title: "შექმენით ახალი პაროლი", lead: "აირჩიეთ ისეთი, რომელსაც დაიმახსოვრებთ: მისით შეხვალთ ანგარიშში.",
                button: "ახალი პაროლის დაყენება", done: "პაროლი განახლდა. შედით ახალი პაროლით.",
                expired: "პაროლის აღდგენის ბმული 30 წუთი მოქმედებს. მოითხოვეთ ახალი და სცადეთ ხელახლა."),
            .confirmEmailChange: Page(
                title: "დაადასტურეთ ახალი ელფოსტა",
                lead: "ამიერიდან ანგარიშში ამ მისამართით შეხვალთ. "
                    + "თუ ელფოსტის დამატება ან შეცვლა არ გითხოვიათ, დახურეთ ეს გვერდი: არაფერი შეიცვლება.",
                button: "ახალი ელფოსტის დადასტურება",
                done: "ახალი ელფოსტის მისამართი დადასტურებულია. შეგიძლიათ დაბრუნდეთ აპლიკაციაში.",
                expired: "ელფოსტის შეცვლის ბმული 30 წუთი მოქმედებს. მოითხოვეთ ახალი და სცადეთ ხელახლა."),
            .revertEmail: Page(
                title: "ელფოსტის ცვლილების გაუქმება",
                lead:
                    "თუ ელფოსტა არ შეგიცვლიათ და არ წაგიშლიათ, დააბრუნეთ თქვენი მისამართი და აირჩიეთ ახალი პაროლი. ყველა მოწყობილობაზე გამოხვალთ ანგარიშიდან.",
                button: "ჩემი ელფოსტის დაბრუნება",
                done: "ელფოსტის მისამართი დაბრუნებულია და ყველა მოწყობილობაზე გამოხვედით ანგარიშიდან. შედით ახალი პაროლით.",
                expired: "ელფოსტის ცვლილების გაუქმების ბმული 7 დღე მოქმედებს. დახმარებისთვის მიმართეთ მხარდაჭერის გუნდს."),
            .reauth: Page(
                title: "დაადასტურეთ, რომ ეს თქვენ ხართ",
                lead: "გახსენით ეს ბმული იმ ტელეფონზე, სადაც დადასტურება მოითხოვეთ: აპლიკაცია იქ დაასრულებს შემოწმებას.",
                button: "", done: "",
                expired: "დადასტურების ბმული 30 წუთი მოქმედებს. მოითხოვეთ ახალი აპლიკაციაში."),
        ])

    static let russian = LinkPageCopy(
        lang: "ru", installTitle: "Установите приложение, чтобы продолжить",
        installText: "На телефоне, где установлено приложение, эта ссылка откроется в нём. Можно завершить и здесь.",
        installTextAppOnly: "Откройте эту ссылку на телефоне, где вы пользуетесь приложением.",
        expiredTitle: "Срок действия ссылки истёк", newPasswordLabel: "Новый пароль", confirmPasswordLabel: "Повторите новый пароль",
        rules: ["Не менее 8 символов", "Не должен быть распространённым паролем", "Не должен состоять только из цифр"],
        mismatch: "Пароли не совпадают.",
        unexpected: "У нас что-то пошло не так. Откройте ссылку ещё раз чуть позже.",
        methodNames: ["phone": "номер телефона", "apple": "вход через Apple", "google": "вход через Google", "passkey": "ключ доступа"],
        removedLead: "Чтобы закрыть доступ посторонним, мы также удалили:",
        twoFactorOff: "Двухэтапная аутентификация отключена: включите её снова в настройках после входа.",
        pages: [
            .verifyEmail: Page(
                title: "Подтвердите адрес электронной почты", lead: "Подтвердите, что этот адрес принадлежит вам.",
                button: "Подтвердить адрес", done: "Адрес подтверждён. Можно вернуться в приложение.",
                expired: "Ссылка для подтверждения действует 30 минут. Запросите новую и попробуйте ещё раз."),
            .resetPassword: Page(
                title: "Придумайте новый пароль", lead: "Выберите пароль, который вы запомните: с ним вы будете входить в аккаунт.",
                button: "Сохранить новый пароль", done: "Пароль обновлён. Войдите с новым паролем.",
                expired: "Ссылка для сброса пароля действует 30 минут. Запросите новую и попробуйте ещё раз."),
            .confirmEmailChange: Page(
                title: "Подтвердите новый адрес",
                lead: "Теперь вы будете входить с этим адресом. "
                    + "Если вы не просили добавить или изменить адрес, закройте эту страницу: ничего не изменится.",
                button: "Подтвердить новый адрес",
                done: "Новый адрес электронной почты подтверждён. Можно вернуться в приложение.",
                expired: "Ссылка для смены адреса действует 30 минут. Запросите новую и попробуйте ещё раз."),
            .revertEmail: Page(
                title: "Отменить смену адреса",
                lead:
                    "Если вы не меняли и не удаляли адрес электронной почты, верните свой адрес и придумайте новый пароль. Вы выйдете из аккаунта на всех устройствах.",
                button: "Вернуть мой адрес",
                done: "Ваш адрес восстановлен, и вы вышли из аккаунта на всех устройствах. Войдите с новым паролем.",
                expired: "Ссылка для отмены смены адреса действует 7 дней. Если нужна помощь, напишите в службу поддержки."),
            .reauth: Page(
                title: "Подтвердите, что это вы",
                lead: "Откройте эту ссылку на телефоне, где вы запросили подтверждение: приложение завершит проверку там.",
                button: "", done: "",
                expired: "Ссылка для подтверждения действует 30 минут. Запросите новую в приложении."),
        ])

    static let byLanguage: [String: LinkPageCopy] = ["ka": .georgian, "en": .english, "ru": .russian]

    /// What a reset or revert removed, in a sentence or two; nil when it removed nothing.
    func removed(_ methods: [String], twoFactorReset: Bool) -> String? {
        var sentences: [String] = []
        if !methods.isEmpty { sentences.append(removedLead + " " + methods.map { methodNames[$0] ?? $0 }.joined(separator: ", ") + ".") }
        if twoFactorReset { sentences.append(twoFactorOff) }
        return sentences.isEmpty ? nil : sentences.joined(separator: " ")
    }

    /// The copy's language, for the API's messages a page shows (`ErrorMessages`).
    var language: Language { Language(rawValue: lang) ?? .en }

    /// The copy of the language `Accept-Language` prefers most among the service's (by `q`;
    /// `en-GB` is `en`), else `fallback`'s (`LEDGER_DEFAULT_LOCALE`).
    static func preferred(_ acceptLanguage: String?, fallback: Language = .en) -> LinkPageCopy {
        let language = Language(tag: AcceptLanguage.preferredSupported(acceptLanguage)) ?? fallback
        return byLanguage[language.rawValue] ?? .english
    }
}
