/// A command the account's state refuses, with the API's code and the product copy.
public struct IdentityError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let accountExists = Code("account_exists")
        public static let noAccount = Code("no_account")
        public static let invalidCredentials = Code("invalid_credentials")
        public static let sessionExpired = Code("session_expired")
        public static let linkExpired = Code("link_expired")
        public static let notFound = Code("not_found")
        public static let rateLimited = Code("rate_limited")
        public static let reauthRequired = Code("reauth_required")
        public static let incorrectCode = Code("incorrect_code")
        public static let codeExpired = Code("code_expired")
        public static let phoneExists = Code("phone_exists")
        public static let noPhone = Code("no_phone")
        public static let noEmail = Code("no_email")
        public static let signInRequired = Code("unauthorized")
        public static let noPassword = Code("no_password")
        public static let emailExists = Code("email_exists")
        public static let emailTaken = Code("email_taken")
        public static let providerInUse = Code("provider_in_use")
        public static let notLinked = Code("not_linked")
        public static let lastMethod = Code("last_method")
        public static let accountDeleted = Code("account_deleted")
        public static let accountDisabled = Code("account_disabled")
        public static let linkMismatch = Code("link_mismatch")
        /// The account a provider's address belongs to may not be joined without a sign-in to it.
        public static let linkRequired = Code("link_required")
        public static let signupCooldown = Code("signup_cooldown")
        public static let emailHeld = Code("email_held")
        /// A revert of a change made while the account had a password names no new one.
        public static let newPasswordRequired = Code("new_password_required")
        public static let exportNotAllowed = Code("export_requires_verification")
        public static let invalidToken = Code("invalid_token")
        public static let deletionRequested = Code("deletion_requested")
        public static let mfaRequired = Code("mfa_required")
        public static let mfaExpired = Code("mfa_expired")
        public static let mfaAlreadyEnabled = Code("mfa_already_enabled")
        public static let mfaNotEnabled = Code("mfa_not_enabled")
        /// A passkey's registration or assertion that does not verify (or names no passkey).
        public static let invalidCredential = Code("invalid_credential")
        public static let passkeyExists = Code("passkey_exists")
        public static let passkeyLimit = Code("passkey_limit")
        /// A reset link support would send has no verified address to go to.
        public static let noVerifiedEmail = Code("no_verified_email")
        public static let invalidLocale = Code("invalid_locale")
    }

    public let code: Code
    public let message: String
    /// For `rateLimited`: seconds until the next try is allowed.
    public let retryAfter: Int?
    /// For `incorrectCode`: wrong codes still allowed before the code is invalidated.
    public let attemptsRemaining: Int?
    /// For `sessionExpired`: how the ended session was signed in (`email`, `phone`, `apple`,
    /// `google`), so the app can highlight that provider on its sign-in screen; nil when the
    /// token names no session.
    public let lastMethod: String?

    public init(
        _ code: Code, _ message: String, retryAfter: Int? = nil, attemptsRemaining: Int? = nil, lastMethod: String? = nil
    ) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
        self.attemptsRemaining = attemptsRemaining
        self.lastMethod = lastMethod
    }

    public var description: String { "\(code): \(message)" }

    public static let sessionExpired = IdentityError(.sessionExpired, "Your session has expired. Sign in again.")
    public static let linkExpired = IdentityError(.linkExpired, "This link has expired")
    public static let invalidCredentials = IdentityError(.invalidCredentials, "Incorrect email or password.")
    public static let reauthRequired = IdentityError(.reauthRequired, "Verify it's you to continue.")
    /// A sign-in's second-factor challenge is unknown, past its 5 minutes, or ended by wrong codes.
    public static let mfaExpired = IdentityError(.mfaExpired, "This sign-in has expired. Sign in again.")
    public static let mfaAlreadyEnabled = IdentityError(.mfaAlreadyEnabled, "Two-factor authentication is already on.")
    public static let mfaNotEnabled = IdentityError(.mfaNotEnabled, "Two-factor authentication is off.")
    /// Every refusal of a passkey looks alike: which check failed is for the log, not the caller.
    public static let invalidCredential = IdentityError(.invalidCredential, "This passkey could not be verified. Try again.")
    public static let passkeyExists = IdentityError(.passkeyExists, "This passkey is already registered.")
    public static let passkeyLimit = IdentityError(
        .passkeyLimit, "This account has as many passkeys as it can hold. Remove one to add another.")
    public static let passkeyNotFound = IdentityError(.notFound, "No such passkey.")
    public static let accountDeleted = IdentityError(.accountDeleted, "This account has been deleted.")
    public static let accountDisabled = IdentityError(.accountDisabled, "This account is disabled. Contact support.")
    public static let signInRequired = IdentityError(.signInRequired, "Sign in to continue.")
    public static let codeExpired = IdentityError(.codeExpired, "Code expired. Request a new one.")
    /// An Apple or Google ID token that does not prove this session's re-auth (no live nonce).
    public static let invalidToken = IdentityError(.invalidToken, "The sign-in could not be verified. Try again.")
    /// A hold reference no hold of this key has.
    public static let holdNotFound = IdentityError(.notFound, "No such hold.")

    /// `sessionExpired` for a token that named a session signed in with `method`.
    public static func sessionExpired(lastMethod method: String) -> IdentityError {
        IdentityError(.sessionExpired, sessionExpired.message, lastMethod: method)
    }

    public static func incorrectCode(attemptsRemaining: Int?) -> IdentityError {
        IdentityError(.incorrectCode, "Code is incorrect. Try again.", attemptsRemaining: attemptsRemaining)
    }
}
