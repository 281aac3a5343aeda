import Foundation
import LedgerAccounts
import LedgerIdentity

/// A change the console makes, behind a confirmation that asks for the reason: the admin API's
/// (`SupportController`), recorded the same way, with the staff member as operator. The heavy
/// ones need the `admin` role and the passkey again.
enum ConsoleAction: String, CaseIterable, Sendable {
    case signOut = "sign-out"
    case passwordReset = "password-reset"
    case resetTwoFactor = "two-factor-reset"
    case removeMethod = "remove-method"
    case removePasskey = "remove-passkey"
    case disable
    case enable

    /// Whether it needs the `admin` role (`accounts:admin`), and so the passkey shown again.
    var needsAdmin: Bool {
        switch self {
        case .signOut, .passwordReset: false
        case .resetTwoFactor, .removeMethod, .removePasskey, .disable, .enable: true
        }
    }

    var heading: String {
        switch self {
        case .signOut: "Sign out everywhere"
        case .passwordReset: "Send a password reset link"
        case .resetTwoFactor: "Reset two-step verification"
        case .removeMethod: "Remove a way to sign in"
        case .removePasskey: "Remove a passkey"
        case .disable: "Disable the account"
        case .enable: "Enable the account"
        }
    }

    var explanation: String {
        switch self {
        case .signOut: "Every session and “Verify it's you” grant of this account ends. The person is told."
        case .passwordReset: "A link to set a new password goes to the account's verified email, as “Forgot password” sends it."
        case .resetTwoFactor:
            "Two-step verification goes off, its recovery codes stop working, and every session ends. Check who is asking first."
        case .removeMethod: "The method goes, never the last way in. The person is told at every address they had."
        case .removePasskey: "The passkey stops signing in, never the last way in. The person is told."
        case .disable: "Every session ends, and nobody can sign in until the account is enabled again. The person is told."
        case .enable: "The account can sign in again. The person is told."
        }
    }

    var button: String {
        switch self {
        case .signOut: "Sign out everywhere"
        case .passwordReset: "Send the link"
        case .resetTwoFactor: "Reset two-step verification"
        case .removeMethod, .removePasskey: "Remove"
        case .disable: "Disable"
        case .enable: "Enable"
        }
    }

    /// Whether its button warns (red) or not.
    var tone: String { self == .passwordReset || self == .enable ? "" : "danger" }

    /// What the account page says once it is done.
    var done: String {
        switch self {
        case .signOut: "Signed out everywhere."
        case .passwordReset: "The reset link is on its way."
        case .resetTwoFactor: "Two-step verification was reset."
        case .removeMethod, .removePasskey: "Removed."
        case .disable: "The account is disabled."
        case .enable: "The account is enabled."
        }
    }
}
