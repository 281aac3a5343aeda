import Foundation

/// What a sign-in checked before it took the account's lock: the credential it read. A sign-in
/// reads the credential (the password's hash, the number's or the identity's owner), checks it
/// outside the lock (scrypt takes a while), then starts its session under the lock; a revert,
/// a reset, a password change or a removal that commits in between must win. `decide` starts
/// the session only while the account still holds what was checked.
public enum SignInProof: Sendable, Equatable {
    /// The password, checked against this hash of the account reached by this address (normalized).
    case password(hash: String, email: String)
    /// A code sent to this number (E.164) at `issuedAt`: a revert ends the codes sent before it.
    case phone(String, issuedAt: Date)
    /// An ID token of this provider's identity.
    case provider(IdentityProvider, subject: String)
    /// A link mailed to this address (normalized), which the same decision just confirmed.
    case emailLink(String)
}

extension AccountState {
    /// Whether the account still holds what `proof` checked.
    public func stillHolds(_ proof: SignInProof) -> Bool {
        switch proof {
        case .password(let hash, let address):
            return passwordHash == hash && email.map(EmailAddress.normalize) == EmailAddress.normalize(address)
        case .phone(let number, let issuedAt):
            return phone == number && issuedAt > (codesEndedAt ?? .distantPast)
        case .provider(let provider, let subject):
            return providerSubjects[provider] == subject
        case .emailLink(let address):
            return emailVerified && email.map(EmailAddress.normalize) == address
        }
    }
}

extension IdentityError {
    /// A sign-in whose credential left the account while it was checked: as if it had been wrong.
    static func credentialGone(_ proof: SignInProof) -> IdentityError {
        switch proof {
        case .password: return .invalidCredentials
        case .phone: return IdentityError(.codeExpired, "Code expired. Request a new one.")
        case .provider(let provider, _): return IdentityError(.notLinked, "\(provider.displayName) is not connected.")
        case .emailLink: return .linkExpired
        }
    }
}
