import Foundation

extension AccountState {
    /// The account's sign-in methods (email + password is one method, and needs both).
    public var signInMethods: [SignInMethod] {
        var methods: [SignInMethod] = []
        if phone != nil { methods.append(.phone) }
        if email != nil && hasPassword { methods.append(.password) }
        for provider in IdentityProvider.allCases where providerSubjects[provider] != nil { methods.append(provider.signInMethod) }
        if !passkeys.isEmpty { methods.append(.passkey) }
        return methods
    }

    /// Every re-auth method the account can use, in the picker's order.
    public var reauthMethods: [ReauthMethod] {
        var methods: [ReauthMethod] = []
        if email != nil && hasPassword { methods.append(.password) }
        if phone != nil { methods.append(.phone) }
        if email != nil { methods.append(.emailLink) }
        for provider in IdentityProvider.allCases where providerSubjects[provider] != nil { methods.append(provider.reauthMethod) }
        if isTOTPEnabled { methods.append(.totp) }
        if !passkeys.isEmpty { methods.append(.passkey) }
        return methods
    }

    /// The picker for `action` (docs/architecture.md "Re-auth"): every method except the one being changed.
    /// Email + password is one method, so a password change offers the email link and an
    /// email change the password. Adding a method does not take the password while the email
    /// is unverified: it proves nothing about who owns the address. On Android, Apple is no option.
    /// `now` (when given) admits what only time makes an option: a passkey for `manage_passkeys`
    /// (`vouchesByPasskey`).
    public func reauthOptions(for action: ReauthAction, platform: ReauthPlatform? = nil, now: Date? = nil) -> ReauthOptions {
        var methods = reauthMethods.filter { method in
            !action.excludedMethods.contains(method) || (now.map { vouchesByPasskey(for: action, method, now: $0) } ?? false)
        }
        if platform == .android { methods.removeAll { $0 == .apple } }
        if (action == .addMethod || action == .manageMFA) && !emailVerified { methods.removeAll { $0 == .password } }
        let targetIsOnlyMethod = action.target.map { signInMethods == [$0] } ?? false
        // For a change, "last method" means the soft warning, which only holds while nothing
        // else can vouch; for a disconnect it is the hard block, whatever else there is.
        let lastMethod = action.changesTargetInPlace ? targetIsOnlyMethod && methods.isEmpty : targetIsOnlyMethod
        return ReauthOptions(methods: methods, lastMethod: lastMethod)
    }

    /// The live grant a re-auth token (by hash) stands for in `sessionID`, if any.
    public func reauthGrant(tokenHash: String, sessionID: UUID, now: Date) -> ReauthGrant? {
        reauthGrants.values.first { $0.tokenHash == tokenHash && $0.sessionID == sessionID && now < $0.expiresAt }
    }

    /// The one guard of every sensitive change: a live grant earned by this session, or (for a
    /// change of the only sign-in method, when the picker has nothing to offer) the session alone.
    public func requireReauth(_ action: ReauthAction, sessionID: UUID, tokenHash: String?, now: Date) throws {
        if action.changesTargetInPlace && reauthOptions(for: action).lastMethod { return }
        guard let tokenHash, let grant = reauthGrant(tokenHash: tokenHash, sessionID: sessionID, now: now) else {
            throw IdentityError.reauthRequired
        }
        // A grant serves every sensitive call in its window, but one earned by the password of
        // an unverified email proves nothing about who owns the address: it does not add a way
        // in (else whoever squats an address could keep a phone on the account after its owner
        // takes it back).
        if action == .addMethod || action == .manageMFA, grant.method == ReauthMethod.password.rawValue, !emailVerified {
            throw IdentityError.reauthRequired
        }
        // Removing a passkey is vouched for by another way in (a passkey is no option for
        // `manage_passkeys`, whose target it is): a device that holds a passkey cannot use it to
        // strip the account's other passkeys, unless passkeys have long been all the account has
        // (then one vouches for removing another, never itself: `removePasskey`).
        if action == .managePasskeys, grant.method == ReauthMethod.passkey.rawValue, !vouchesByPasskey(for: action, .passkey, now: now) {
            throw IdentityError.reauthRequired
        }
    }

    /// How long passkeys must have been all that vouches for an account before one of them
    /// vouches for removing another. A thief holding one passkey who removes the phone (a
    /// passkey answers that) would otherwise remove the owner's passkeys next with the same
    /// grant, and nobody would be told; the owner who lost a device in a passkey-only account
    /// of long standing removes it at once. The phone's removal told its owner by SMS meanwhile.
    public static let passkeyVouchingDelay: TimeInterval = 7 * 86_400

    /// Whether `method`, which `action` leaves out as its target, vouches for it all the same:
    /// a passkey for `manage_passkeys` when nothing but passkeys has vouched for the account
    /// (no password, phone, email link, provider or TOTP) for `passkeyVouchingDelay` (else,
    /// once the phone went, no passkey could ever be removed).
    func vouchesByPasskey(for action: ReauthAction, _ method: ReauthMethod, now: Date) -> Bool {
        guard action == .managePasskeys, method == .passkey, let since = passkeyOnlySince else { return false }
        return now.timeIntervalSince(since) >= Self.passkeyVouchingDelay
    }

    /// Whether passkeys are all that vouches for the account (`passkeyOnlySince` follows it).
    var vouchedForByPasskeysOnly: Bool {
        !passkeys.isEmpty && reauthMethods.allSatisfy { $0 == .passkey }
    }
}
