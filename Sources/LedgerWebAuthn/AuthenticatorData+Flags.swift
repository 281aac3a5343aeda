extension AuthenticatorData {
    /// The flags byte (§6.1): UP, UV, BE, BS, AT, ED.
    public struct Flags: Sendable, Hashable {
        public let rawValue: UInt8

        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// UP: the user was present (touched, tapped, looked).
        public var userPresent: Bool { rawValue & 0x01 != 0 }
        /// UV: the user was verified (biometric or PIN).
        public var userVerified: Bool { rawValue & 0x04 != 0 }
        /// BE: the credential may be backed up (synced passkey); fixed for the credential's life.
        public var backupEligible: Bool { rawValue & 0x08 != 0 }
        /// BS: the credential is backed up now.
        public var backedUp: Bool { rawValue & 0x10 != 0 }
        /// AT: attested credential data follows (registration).
        public var attestedCredentialData: Bool { rawValue & 0x40 != 0 }
        /// ED: extension outputs follow.
        public var extensionData: Bool { rawValue & 0x80 != 0 }
    }
}
