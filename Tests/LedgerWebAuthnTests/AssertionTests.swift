import LedgerCore
import LedgerWebAuthn
import LedgerWebAuthnTesting
import Testing

/// The authentication ceremony (§7.2), with assertions from the soft authenticator: each check
/// has an assertion that only it refuses.
@Suite("Assertion")
struct AssertionTests {
    static let rpID = "example.com"
    static let origin = "https://app.example.com"
    let relyingParty = RelyingParty(id: Self.rpID, origins: [Self.origin])
    let authenticator = SoftAuthenticator()
    let challenge: [UInt8] = Array(repeating: 0xA5, count: 32)
    let userHandle: [UInt8] = [1, 2, 3, 4]

    func credential(_ algorithm: COSEAlgorithm = .es256, flags: SoftFlags = SoftFlags()) -> SoftCredential {
        authenticator.makeCredential(
            rpID: Self.rpID, origin: Self.origin, challenge: [0], userHandle: userHandle, algorithm: algorithm, flags: flags
        ).credential
    }

    func code(
        _ response: AuthenticationResponseJSON, key: [UInt8], stored: UInt32 = 0, challenge: [UInt8]? = nil,
        requireUserVerification: Bool = true
    ) -> WebAuthnError.Code? {
        refusal {
            _ = try relyingParty.verifyAssertion(
                response, challenge: challenge ?? self.challenge, publicKey: key, storedSignCount: stored,
                requireUserVerification: requireUserVerification)
        }
    }

    @Test(
        "ES256, EdDSA and RS256 assertions verify, and give the counter, flags and user handle",
        arguments: [COSEAlgorithm.es256, .edDSA, .rs256])
    func happyPaths(algorithm: COSEAlgorithm) throws {
        let credential = credential(algorithm, flags: .synced)
        let response = authenticator.getAssertion(credential: credential, challenge: challenge)
        #expect(try response.credentialID() == credential.id)
        #expect(try response.userHandleBytes() == userHandle)
        #expect(try response.clientData().challenge == challenge)
        let verified = try relyingParty.verifyAssertion(response, challenge: challenge, publicKey: credential.publicKey, storedSignCount: 0)
        #expect(verified.credentialID == credential.id)
        #expect(verified.signCount == 1)
        #expect(verified.userVerified && verified.backupEligible && verified.backedUp)
        #expect(verified.userHandle == userHandle)
    }

    @Test("the credential type must be public-key, and the client data type webauthn.get")
    func types() {
        let credential = credential()
        var response = authenticator.getAssertion(credential: credential, challenge: challenge)
        response.type = "public_key"
        #expect(code(response, key: credential.publicKey) == .type)
        let create = authenticator.getAssertion(credential: credential, challenge: challenge, clientDataType: "webauthn.create")
        #expect(code(create, key: credential.publicKey) == .type)
    }

    @Test("another challenge is refused, before the signature is checked")
    func wrongChallenge() {
        let credential = credential()
        let response = authenticator.getAssertion(credential: credential, challenge: challenge)
        #expect(code(response, key: credential.publicKey, challenge: [UInt8](repeating: 0xA5, count: 31) + [0xA4]) == .challenge)
        #expect(code(response, key: credential.publicKey, challenge: challenge + [0]) == .challenge)
    }

    @Test("another origin, a cross-origin frame and another RP id are refused")
    func originAndRPID() {
        let credential = credential()
        let key = credential.publicKey
        #expect(
            code(authenticator.getAssertion(credential: credential, challenge: challenge, origin: "https://evil.example"), key: key)
                == .origin)
        #expect(code(authenticator.getAssertion(credential: credential, challenge: challenge, crossOrigin: true), key: key) == .origin)
        #expect(
            code(authenticator.getAssertion(credential: credential, challenge: challenge, topOrigin: "https://evil.example"), key: key)
                == .origin)
        #expect(code(authenticator.getAssertion(credential: credential, challenge: challenge, rpID: "evil.example"), key: key) == .rpIDHash)
    }

    @Test("UP clear is refused; UV clear is refused when required and accepted when not; BS without BE is malformed")
    func flags() throws {
        let credential = credential()
        let key = credential.publicKey
        let absent = authenticator.getAssertion(credential: credential, challenge: challenge, flags: SoftFlags(userPresent: false))
        #expect(code(absent, key: key, stored: 100) == .userPresence)
        let unverified = authenticator.getAssertion(credential: credential, challenge: challenge, flags: SoftFlags(userVerified: false))
        #expect(code(unverified, key: key) == .userVerification)
        let verified = try relyingParty.verifyAssertion(
            unverified, challenge: challenge, publicKey: key, storedSignCount: 0, requireUserVerification: false)
        #expect(!verified.userVerified)
        let backedUp = authenticator.getAssertion(credential: credential, challenge: challenge, flags: SoftFlags(backedUp: true))
        #expect(code(backedUp, key: key) == .malformed)
    }

    @Test("id and rawId must agree")
    func credentialIDs() {
        let credential = credential()
        var response = authenticator.getAssertion(credential: credential, challenge: challenge)
        response.id = Base64URL.encode([9, 9, 9])
        #expect(code(response, key: credential.publicKey) == .credential)
        #expect(throws: WebAuthnError.self) { try response.credentialID() }
        response.id = "***"
        #expect(code(response, key: credential.publicKey) == .malformed)
    }

    @Test("a signature by another key is refused, of the same algorithm or another", arguments: [COSEAlgorithm.es256, .edDSA, .rs256])
    func anotherKey(algorithm: COSEAlgorithm) {
        let signer = credential(algorithm)
        let response = authenticator.getAssertion(credential: signer, challenge: challenge)
        for other in [credential(.es256), credential(.edDSA)] {
            #expect(code(response, key: other.publicKey) == .signature)
        }
    }

    @Test("a flipped byte in the authenticator data, the client data or the signature is refused")
    func flippedBytes() throws {
        let credential = credential(flags: .synced)
        let response = authenticator.getAssertion(credential: credential, challenge: challenge)
        let authData = try #require(Base64URL.decode(response.response.authenticatorData))
        // Every byte of the RP id hash (refused as another RP), flags byte bits that keep it well-formed, counter bytes.
        for index in authData.indices {
            var flipped = authData
            flipped[index] ^= index == 32 ? 0x04 : 0x01  // UV for the flags byte
            var tampered = response
            tampered.response.authenticatorData = Base64URL.encode(flipped)
            let refused = code(tampered, key: credential.publicKey, requireUserVerification: false)
            #expect(refused == (index < 32 ? .rpIDHash : .signature), "byte \(index)")
        }
        var clientData = try #require(Base64URL.decode(response.response.clientDataJSON))
        clientData[clientData.count - 1] = UInt8(ascii: " ")  // `}` → ` `: no longer JSON
        var broken = response
        broken.response.clientDataJSON = Base64URL.encode(clientData)
        #expect(code(broken, key: credential.publicKey) == .malformed)
        // Well-formed other client data: a space added after the last member.
        var spaced = try #require(Base64URL.decode(response.response.clientDataJSON))
        spaced.insert(UInt8(ascii: " "), at: spaced.count - 1)
        broken.response.clientDataJSON = Base64URL.encode(spaced)
        #expect(code(broken, key: credential.publicKey) == .signature)
        var signature = try #require(Base64URL.decode(response.response.signature))
        signature[8] ^= 0x10
        var badSignature = response
        badSignature.response.signature = Base64URL.encode(signature)
        #expect(code(badSignature, key: credential.publicKey) == .signature)
    }

    @Test("counter rule: equal or lower non-zero counters are refused with .counter; zero and zero passes; growing passes")
    func counterRule() throws {
        let credential = credential()
        let key = credential.publicKey
        func signedWith(_ count: UInt32) -> AuthenticationResponseJSON {
            authenticator.getAssertion(credential: credential, challenge: challenge, signCount: count)
        }
        #expect(code(signedWith(5), key: key, stored: 5) == .counter)
        #expect(code(signedWith(4), key: key, stored: 5) == .counter)
        #expect(code(signedWith(0), key: key, stored: 5) == .counter)
        #expect(code(signedWith(0), key: key, stored: 0) == nil)
        #expect(code(signedWith(1), key: key, stored: 0) == nil)
        #expect(code(signedWith(6), key: key, stored: 5) == nil)
        #expect(code(signedWith(UInt32.max), key: key, stored: UInt32.max - 1) == nil)
        #expect(code(signedWith(UInt32.max), key: key, stored: UInt32.max) == .counter)
        // The soft authenticator's own counter grows by one per assertion, from the last one it used.
        _ = signedWith(41)
        let next = try relyingParty.verifyAssertion(
            authenticator.getAssertion(credential: credential, challenge: challenge), challenge: challenge, publicKey: key,
            storedSignCount: 41)
        #expect(next.signCount == 42)
        #expect(authenticator.signCount(of: credential) == 42)
        // A counter that did not grow but whose signature fails is a forgery, not a clone: .signature.
        var forged = signedWith(3)
        forged.response.signature = signedWith(4).response.signature
        #expect(code(forged, key: key, stored: 5) == .signature)
    }

    @Test("a stored key that does not parse refuses the assertion as .credential")
    func unusableStoredKey() {
        let credential = credential()
        let response = authenticator.getAssertion(credential: credential, challenge: challenge)
        #expect(code(response, key: [0xA0], stored: 0) == .credential)
        #expect(code(response, key: [], stored: 0) == .credential)
    }

    @Test("the user handle: absent or empty is nil, not base64url or longer than 64 bytes is malformed")
    func userHandles() throws {
        let credential = credential()
        let without = authenticator.getAssertion(credential: credential, challenge: challenge, includeUserHandle: false)
        #expect(try without.userHandleBytes() == nil)
        #expect(
            try relyingParty.verifyAssertion(without, challenge: challenge, publicKey: credential.publicKey, storedSignCount: 0).userHandle
                == nil)
        var empty = without
        empty.response.userHandle = ""
        #expect(try empty.userHandleBytes() == nil)
        var long = without
        long.response.userHandle = Base64URL.encode([UInt8](repeating: 1, count: 65))
        #expect(code(long, key: credential.publicKey) == .malformed)
        long.response.userHandle = "a+b"
        #expect(code(long, key: credential.publicKey) == .malformed)
    }
}
