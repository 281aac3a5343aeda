import Foundation
import LedgerIdentity

/// What `GET /me` and `GET /me/auth-methods` show, as the `accounts` projection holds it.
public struct AccountSummary: Sendable, Equatable {
    public let accountID: UUID
    public let email: String?
    public let emailVerified: Bool
    public let hasPassword: Bool
    public let passwordChangedAt: Date?
    public let displayName: String?
    public let handle: String?
    public let handleIsTemporary: Bool
    public let createdAt: Date?
    /// E.164 and the picked region, when the account signs in by phone.
    public let phone: String?
    public let phoneRegion: String?
    public let appleLinked: Bool
    public let googleLinked: Bool
    /// Two-factor authentication on, and the recovery codes not used yet.
    public let totpEnabled: Bool
    public let recoveryCodesLeft: Int
    /// The address `add-with-password` waits to have confirmed (not the account's yet).
    public let pendingEmail: String?
    /// How many passkeys the account has.
    public let passkeys: Int
    /// The uploaded picture's version; nil: the initials tile.
    public let avatarETag: String?

    public init(
        accountID: UUID, email: String?, emailVerified: Bool, hasPassword: Bool, passwordChangedAt: Date?,
        displayName: String?, handle: String?, handleIsTemporary: Bool, createdAt: Date?, phone: String?, phoneRegion: String?,
        appleLinked: Bool, googleLinked: Bool, totpEnabled: Bool = false, recoveryCodesLeft: Int = 0, pendingEmail: String? = nil,
        passkeys: Int = 0, avatarETag: String? = nil
    ) {
        self.avatarETag = avatarETag
        self.passkeys = passkeys
        self.pendingEmail = pendingEmail
        self.totpEnabled = totpEnabled
        self.recoveryCodesLeft = recoveryCodesLeft
        self.appleLinked = appleLinked
        self.googleLinked = googleLinked
        self.phone = phone
        self.phoneRegion = phoneRegion
        self.accountID = accountID
        self.email = email
        self.emailVerified = emailVerified
        self.hasPassword = hasPassword
        self.passwordChangedAt = passwordChangedAt
        self.displayName = displayName
        self.handle = handle
        self.handleIsTemporary = handleIsTemporary
        self.createdAt = createdAt
    }

    /// The same view from a folded state (at `now`: a pending address whose link expired is no more).
    public init(_ state: AccountState, at now: Date? = nil) {
        self.init(
            accountID: state.accountID, email: state.email, emailVerified: state.emailVerified, hasPassword: state.hasPassword,
            passwordChangedAt: state.passwordChangedAt, displayName: state.displayName, handle: state.handle,
            handleIsTemporary: state.handleIsTemporary, createdAt: state.createdAt, phone: state.phone,
            phoneRegion: state.phoneRegion, appleLinked: state.providerSubjects[.apple] != nil,
            googleLinked: state.providerSubjects[.google] != nil, totpEnabled: state.isTOTPEnabled,
            recoveryCodesLeft: state.isTOTPEnabled ? state.recoveryCodeHashes.count : 0,
            pendingEmail: state.pendingEmail.flatMap { pending in
                state.pendingLinks[pending.linkID].flatMap { link in now.map { link.expiresAt > $0 } ?? true ? pending.email : nil }
            }, passkeys: state.passkeys.count, avatarETag: state.avatarETag)
    }
}
