/// The flags a `SoftAuthenticator` sets, to play a platform passkey (the defaults), a synced one
/// (`backupEligible`, `backedUp`) or, in tests, an authenticator that skips a check.
public struct SoftFlags: Sendable, Hashable {
    public var userPresent: Bool
    public var userVerified: Bool
    public var backupEligible: Bool
    public var backedUp: Bool

    public init(userPresent: Bool = true, userVerified: Bool = true, backupEligible: Bool = false, backedUp: Bool = false) {
        self.userPresent = userPresent
        self.userVerified = userVerified
        self.backupEligible = backupEligible
        self.backedUp = backedUp
    }

    /// A synced passkey (iCloud Keychain, Google Password Manager): backup eligible and backed up.
    public static let synced = SoftFlags(backupEligible: true, backedUp: true)

    /// The flags byte, with AT and ED as asked.
    func byte(attestedCredentialData: Bool, extensionData: Bool) -> UInt8 {
        var byte: UInt8 = 0
        if userPresent { byte |= 0x01 }
        if userVerified { byte |= 0x04 }
        if backupEligible { byte |= 0x08 }
        if backedUp { byte |= 0x10 }
        if attestedCredentialData { byte |= 0x40 }
        if extensionData { byte |= 0x80 }
        return byte
    }
}
