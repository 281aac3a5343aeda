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
    public func reauthOptions(for action: ReauthAction, platform: ReauthPlatform? = nil) -> ReauthOptions {
        var methods = reauthMethods.filter { !action.excludedMethods.contains($0) || vouchesByPasskey(for: action, $0) }
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
        // strip the account's other passkeys, unless passkeys are all the account has (then one
        // vouches for removing another, never itself: `removePasskey`).
        if action == .managePasskeys, grant.method == ReauthMethod.passkey.rawValue, !vouchesByPasskey(for: action, .passkey) {
            throw IdentityError.reauthRequired
        }
    }

    /// Whether `method`, which `action` leaves out as its target, vouches for it all the same:
    /// a passkey for `manage_passkeys` when the account's only ways in are passkeys (else, once
    /// a passkey's grant removed the phone, no passkey could ever be removed).
    func vouchesByPasskey(for action: ReauthAction, _ method: ReauthMethod) -> Bool {
        action == .managePasskeys && method == .passkey && signInMethods == [.passkey]
    }
}
