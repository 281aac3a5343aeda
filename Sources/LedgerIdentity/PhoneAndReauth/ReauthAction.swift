/// A sensitive change that needs "Verify it's you" first (docs/architecture.md "Re-auth").
public enum ReauthAction: String, Sendable, CaseIterable {
    case changePhone = "change_phone"
    case changeEmail = "change_email"
    case changePassword = "change_password"
    case disconnectApple = "disconnect_apple"
    case disconnectGoogle = "disconnect_google"
    case deleteAccount = "delete_account"
    /// Removing the sign-in phone number; removing the email (and its password with it).
    case removePhone = "remove_phone"
    case removeEmail = "remove_email"
    /// Adding a sign-in method (a phone, an email and password, Apple or Google): a stolen
    /// session must not add its own way in and then re-authenticate with it.
    case addMethod = "add_method"
    /// Turning two-factor authentication on or off, and new recovery codes.
    case manageMFA = "manage_mfa"
    /// Removing a passkey.
    case managePasskeys = "manage_passkeys"

    /// The sign-in method the action changes or removes (email + password counts as one).
    public var target: SignInMethod? {
        switch self {
        case .changePhone, .removePhone: return .phone
        case .changeEmail, .changePassword, .removeEmail: return .password
        case .disconnectApple: return .apple
        case .disconnectGoogle: return .google
        case .deleteAccount, .addMethod, .manageMFA, .managePasskeys: return nil
        }
    }

    /// The re-auth methods the picker leaves out: the one being changed. An email change is
    /// confirmed by the password (not by a link to the address being replaced); a password
    /// change by the email link (not by the password being replaced); removing the email takes
    /// both with it, so neither vouches for it.
    public var excludedMethods: [ReauthMethod] {
        switch self {
        case .changePhone, .removePhone: return [.phone]
        case .changeEmail: return [.emailLink]
        case .removeEmail: return [.password, .emailLink]
        case .changePassword: return [.password]
        case .disconnectApple: return [.apple]
        case .disconnectGoogle: return [.google]
        case .managePasskeys: return [.passkey]
        case .deleteAccount, .addMethod, .manageMFA: return []
        }
    }

    /// Whether the action changes its target in place (the account stays reachable by it). Only
    /// such a change may go ahead on the session alone, and only when the picker has nothing
    /// to offer (the picker's last-method variant); a disconnect, a deletion or an added method
    /// never does.
    public var changesTargetInPlace: Bool {
        switch self {
        case .changePhone, .changeEmail, .changePassword: return true
        case .disconnectApple, .disconnectGoogle, .removePhone, .removeEmail, .deleteAccount, .addMethod, .manageMFA, .managePasskeys:
            return false
        }
    }
}

/// A way to sign in: the hub's rows.
public enum SignInMethod: String, Sendable, CaseIterable {
    case phone, password, apple, google
    /// One or more passkeys (each is its own way in; the hub counts them).
    case passkey
}

/// A way to pass "Verify it's you", in the picker's order.
public enum ReauthMethod: String, Sendable, CaseIterable {
    case password, phone
    case emailLink = "email_link"
    case apple, google
    /// A code of the authenticator app, when two-factor authentication is on.
    case totp
    /// An assertion of one of the account's passkeys.
    case passkey
}

/// Where the picker is shown (`platform=`): Sign in with Apple is no option on Android.
public enum ReauthPlatform: String, Sendable, CaseIterable {
    case ios, android, web
}

/// What the re-auth picker offers for one action.
public struct ReauthOptions: Sendable, Equatable {
    public var methods: [ReauthMethod]
    /// The action's target is the account's only sign-in method and nothing else can vouch
    /// for the person: a change goes ahead on the session alone (soft warning), a disconnect
    /// is refused (`409 last_method`).
    public var lastMethod: Bool

    public init(methods: [ReauthMethod], lastMethod: Bool) {
        self.methods = methods
        self.lastMethod = lastMethod
    }
}
