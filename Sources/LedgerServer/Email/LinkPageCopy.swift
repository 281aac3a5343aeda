import Foundation

/// The words of the link pages, in one language. English is the only copy so far; another
/// language is one more value in `byLanguage`, chosen by `Accept-Language`.
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

    static let byLanguage: [String: LinkPageCopy] = ["en": .english]

    /// What a reset or revert removed, in a sentence or two; nil when it removed nothing.
    func removed(_ methods: [String], twoFactorReset: Bool) -> String? {
        var sentences: [String] = []
        if !methods.isEmpty { sentences.append(removedLead + " " + methods.map { methodNames[$0] ?? $0 }.joined(separator: ", ") + ".") }
        if twoFactorReset { sentences.append(twoFactorOff) }
        return sentences.isEmpty ? nil : sentences.joined(separator: " ")
    }

    /// The copy of the first language in `Accept-Language` the service has (by primary
    /// subtag: `en-GB` is `en`), else English.
    static func preferred(_ acceptLanguage: String?) -> LinkPageCopy {
        for entry in (acceptLanguage ?? "").split(separator: ",") {
            let parts = entry.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.dropFirst().contains(where: { $0.replacingOccurrences(of: " ", with: "") == "q=0" }) { continue }
            let primary = parts.first?.split(separator: "-").first.map { $0.lowercased() } ?? ""
            if let copy = byLanguage[primary] { return copy }
        }
        return .english
    }
}
