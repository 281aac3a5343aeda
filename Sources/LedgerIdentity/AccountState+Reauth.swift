import Foundation

extension AccountState {
    /// The account's sign-in methods (email + password is one method, and needs both).
    public var signInMethods: [SignInMethod] {
        var methods: [SignInMethod] = []
        if phone != nil { methods.append(.phone) }
        if email != nil && hasPassword { methods.append(.password) }
        for provider in IdentityProvider.allCases where providerSubjects[provider] != nil { methods.append(provider.signInMethod) }
        return methods
    }

    /// Every re-auth method the account can use, in the picker's order.
    public var reauthMethods: [ReauthMethod] {
        var methods: [ReauthMethod] = []
        if email != nil && hasPassword { methods.append(.password) }
        if phone != nil { methods.append(.phone) }
        if email != nil { methods.append(.emailLink) }
        for provider in IdentityProvider.allCases where providerSubjects[provider] != nil { methods.append(provider.reauthMethod) }
        return methods
    }

    /// The picker for `action`: every method except the one being changed, and whether the
    /// target is the only sign-in method left.
    public func reauthOptions(for action: ReauthAction) -> ReauthOptions {
        let lastMethod = action.target.map { signInMethods == [$0] } ?? false
        return ReauthOptions(methods: reauthMethods.filter { $0 != action.excludedMethod }, lastMethod: lastMethod)
    }

    /// The live grant a re-auth token (by hash) stands for in `sessionID`, if any.
    public func reauthGrant(tokenHash: String, sessionID: UUID, now: Date) -> ReauthGrant? {
        reauthGrants.values.first { $0.tokenHash == tokenHash && $0.sessionID == sessionID && now < $0.expiresAt }
    }

    /// The one guard of every sensitive change: a live grant earned by this session, or (for a
    /// change of the only sign-in method) the session alone.
    public func requireReauth(_ action: ReauthAction, sessionID: UUID, tokenHash: String?, now: Date) throws {
        if action.sessionSufficesForLastMethod && reauthOptions(for: action).lastMethod { return }
        guard let tokenHash, reauthGrant(tokenHash: tokenHash, sessionID: sessionID, now: now) != nil else {
            throw IdentityError.reauthRequired
        }
    }
}
