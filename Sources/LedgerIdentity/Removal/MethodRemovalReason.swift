/// Why a sign-in method was removed other than by its owner (`phone.removed`,
/// `provider.unlinked`, `email.removed`: no `reason` when the owner removed it), and whether the
/// owner then hears of it as a method removed.
public enum MethodRemovalReason: String, Sendable, CaseIterable, Codable {
    /// A password reset proved the address: every other method goes (the reset has its notice).
    case addressProven = "address_proven"
    /// The owner reverted an email change: what the change's span added goes (the revert has its notice).
    case emailReverted = "email_reverted"
    /// Apple says the person withdrew consent for the app.
    case appleConsentRevoked = "apple_consent_revoked"
    /// Another account proved the (unverified) address: this one lets it go.
    case provenByAnotherAccount = "proven_by_another_account"
    /// The support desk removed it (`admin.method_removed` names who and why; the owner gets
    /// `changed_by_support` instead).
    case support

    /// Whether the owner is told of the removal (`method_removed`): not when the change that
    /// removed it sends a notice of its own.
    public var sendsRemovalNotice: Bool { self == .appleConsentRevoked || self == .provenByAnotherAccount }
}
