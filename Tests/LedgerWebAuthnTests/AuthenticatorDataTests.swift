import Crypto
import LedgerCore
import LedgerWebAuthn
import LedgerWebAuthnTesting
import Testing

@Suite("Authenticator data")
struct AuthenticatorDataTests {
    static let rpIDHash = Array(SHA256.hash(data: Array("example.com".utf8)))
    static let key = CBORValue.map([
        (.integer(1), .integer(1)), (.integer(3), .integer(-8)), (.integer(-1), .integer(6)),
        (.integer(-2), .bytes(Array(repeating: 9, count: 32))),
    ]).encoded

    /// Authenticator data with the counter 0x01020304, and the credential and tail given.
    static func bytes(flags: UInt8, credentialID: [UInt8]? = nil, key: [UInt8] = key, tail: [UInt8] = []) -> [UInt8] {
        var bytes = rpIDHash + [flags, 1, 2, 3, 4]
        if let credentialID {
            bytes +=
                [UInt8](repeating: 0xAA, count: 16) + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)] + credentialID
                + key
        }
        return bytes + tail
    }

    @Test("the header: RP id hash, each flag, the big-endian counter")
    func header() throws {
        let data = try AuthenticatorData(bytes: Self.bytes(flags: 0x1D))
        #expect(data.rpIDHash == Self.rpIDHash)
        #expect(data.signCount == 0x0102_0304)
        #expect(data.flags.userPresent && data.flags.userVerified && data.flags.backupEligible && data.flags.backedUp)
        #expect(!data.flags.attestedCredentialData && !data.flags.extensionData)
        #expect(data.attestedCredential == nil && data.extensions == nil)
        #expect(data.raw.count == 37)
        // The reserved bits (0x02, 0x20) are ignored.
        #expect(try AuthenticatorData(bytes: Self.bytes(flags: 0x23)).flags.userPresent)
        #expect(throws: WebAuthnError(.malformed, "authenticator data: 36 bytes, at least 37 expected")) {
            try AuthenticatorData(bytes: Array(Self.bytes(flags: 0x01).dropLast()))
        }
    }

    @Test("the attested credential: AAGUID, an id of 1 to 1023 bytes, the COSE key's exact bytes")
    func attestedCredential() throws {
        let data = try AuthenticatorData(bytes: Self.bytes(flags: 0x41, credentialID: [5, 6, 7]))
        let credential = try #require(data.attestedCredential)
        #expect(credential.aaguid == [UInt8](repeating: 0xAA, count: 16))
        #expect(credential.credentialID == [5, 6, 7])
        #expect(credential.publicKey == Self.key)
        #expect(
            try AuthenticatorData(bytes: Self.bytes(flags: 0x41, credentialID: [UInt8](repeating: 1, count: 1023))).attestedCredential
                != nil)
        for id in [[], [UInt8](repeating: 1, count: 1024)] {
            #expect(throws: WebAuthnError.self) { try AuthenticatorData(bytes: Self.bytes(flags: 0x41, credentialID: id)) }
        }
        // Cut short: in the AAGUID, in the id, in the key; and AT set with nothing after the header.
        let full = Self.bytes(flags: 0x41, credentialID: [5, 6, 7])
        for length in [37, 45, 54, 56, full.count - 1] {
            #expect(throws: WebAuthnError.self) { try AuthenticatorData(bytes: Array(full.prefix(length))) }
        }
    }

    @Test("extensions (ED) must be one CBOR map; bytes no flag announces are malformed")
    func extensions() throws {
        let map = CBORValue.map([(.text("credProtect"), .unsigned(1))])
        let data = try AuthenticatorData(bytes: Self.bytes(flags: 0xC1, credentialID: [1], tail: map.encoded))
        #expect(data.extensions == map)
        #expect(try AuthenticatorData(bytes: Self.bytes(flags: 0x81, tail: map.encoded)).extensions == map)
        for (flags, tail) in [
            (UInt8(0x81), CBORValue.array([]).encoded), (0x81, []), (0x81, map.encoded + [0]), (0x01, map.encoded), (0x01, [0]),
        ] {
            #expect(throws: WebAuthnError.self) { try AuthenticatorData(bytes: Self.bytes(flags: flags, tail: tail)) }
        }
        // Without ED, the key must end the data.
        #expect(throws: WebAuthnError.self) { try AuthenticatorData(bytes: Self.bytes(flags: 0x41, credentialID: [1], tail: map.encoded)) }
    }

    @Test("backed up (BS) without backup eligibility (BE) is malformed")
    func backupState() {
        #expect(throws: WebAuthnError.self) { try AuthenticatorData(bytes: Self.bytes(flags: 0x11)) }
        #expect((try? AuthenticatorData(bytes: Self.bytes(flags: 0x19))) != nil)
        #expect((try? AuthenticatorData(bytes: Self.bytes(flags: 0x09))) != nil)
    }
}
