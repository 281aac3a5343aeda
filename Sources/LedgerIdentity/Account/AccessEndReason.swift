/// Why every pending email link and live re-auth grant of an account ends at once (recovery,
/// a password change, disabling, deletion), as recorded in `email.links_revoked` and
/// `reauth.grants_revoked`; and what each ends.
public enum AccessEndReason: String, Sendable, CaseIterable {
    case passwordReset = "password_reset"
    case passwordChanged = "password_changed"
    case emailReverted = "email_reverted"
    case accountDisabled = "account_disabled"
    case appleConsentRevoked = "apple_consent_revoked"
    case accountDeleted = "account_deleted"
    /// The support desk signed the account out everywhere, or reset its two-factor.
    case signedOutBySupport = "signed_out_by_support"
    case twoFactorResetBySupport = "two_factor_reset_by_support"

    /// Whether revert links end too. They are the previous owner's way back: an attacker who
    /// moved the email and then reset the password must not end them; only deletion does.
    public var endsRevertLinks: Bool { self == .accountDeleted }
}
