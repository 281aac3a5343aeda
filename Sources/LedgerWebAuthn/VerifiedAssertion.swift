/// An assertion that passed every check of §7.2, the signature and the counter rule included:
/// what the service records of the sign-in.
public struct VerifiedAssertion: Sendable, Hashable {
    public let credentialID: [UInt8]
    /// The new counter, to store.
    public let signCount: UInt32
    public let userVerified: Bool
    public let backupEligible: Bool
    /// BS now (it may change over the credential's life).
    public let backedUp: Bool
    /// The user handle the authenticator returned; the caller checks it is the credential's owner's.
    public let userHandle: [UInt8]?

    public init(
        credentialID: [UInt8], signCount: UInt32, userVerified: Bool, backupEligible: Bool, backedUp: Bool, userHandle: [UInt8]?
    ) {
        self.credentialID = credentialID
        self.signCount = signCount
        self.userVerified = userVerified
        self.backupEligible = backupEligible
        self.backedUp = backedUp
        self.userHandle = userHandle
    }
}
