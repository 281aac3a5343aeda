/// Why a password was set (`password.set`'s `reason`), and what each reason does to the account
/// besides: the rules read these properties, not the spelling.
public enum PasswordSetReason: String, Sendable, CaseIterable, Codable {
    /// At sign-up.
    case signup
    /// By the signed-in owner, after re-auth.
    case change
    /// Through a reset link.
    case reset
    /// The same password under a stronger scrypt cost.
    case rehash
    /// With an email added to an account that had none.
    case add
    /// With an email change reverted from the old address.
    case revert
    /// Brought from another system, in its own form (`account.imported`): replaced at the next
    /// password sign-in (`password.rehashed`).
    case imported

    /// Every reason but a rehash puts a new password in place (`password_changed_at` moves).
    public var changesThePassword: Bool { self != .rehash }

    /// A reset ends the other reset links: one was used, the rest are spent.
    public var endsResetLinks: Bool { self == .reset }

    /// A new password ends the sign-ins waiting for their second factor: one begun with a
    /// phished password is over.
    public var endsSecondFactorChallenges: Bool { self == .reset || self == .change }

    /// A reset or a revert forgets the known devices: whoever had access may hold a device
    /// token, and their next sign-in must alert.
    public var forgetsKnownDevices: Bool { self == .reset || self == .revert }

    /// Whether the owner hears of it: as a method added (`add`), or a password changed.
    public var isMethodAdded: Bool { self == .add }
    public var isPasswordChange: Bool { self == .change || self == .reset }
}
