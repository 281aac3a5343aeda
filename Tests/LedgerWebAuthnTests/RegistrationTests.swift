import Crypto
import LedgerCore
import LedgerWebAuthn
import LedgerWebAuthnTesting
import Testing

/// The registration ceremony (§7.1), with responses from the soft authenticator: each check
/// has a response that only it refuses.
@Suite("Registration")
struct RegistrationTests {
    static let rpID = "example.com"
    static let origin = "https://app.example.com"
    static let android = "android:apk-key-hash:" + Base64URL.encode(SHA256.hash(data: Array("signing certificate".utf8)))
    let relyingParty = RelyingParty(id: Self.rpID, origins: [Self.origin, "http://localhost:8080", Self.android])
    let authenticator = SoftAuthenticator()
    let challenge = Array(0..<32).map(UInt8.init)
    let userHandle: [UInt8] = Array(repeating: 7, count: 16)

    func register(
        algorithm: COSEAlgorithm = .es256, attestation: SoftAttestation = .none, flags: SoftFlags = SoftFlags(),
        rpID: String = Self.rpID, origin: String = Self.origin, clientDataType: String = "webauthn.create",
        crossOrigin: Bool? = false, topOrigin: String? = nil, extensions: CBORValue? = nil
    ) -> RegistrationResponseJSON {
        authenticator.makeCredential(
            rpID: rpID, origin: origin, challenge: challenge, userHandle: userHandle, algorithm: algorithm, attestation: attestation,
            flags: flags, clientDataType: clientDataType, crossOrigin: crossOrigin, topOrigin: topOrigin, extensions: extensions
        ).response
    }

    func code(_ response: RegistrationResponseJSON, challenge: [UInt8]? = nil, requireUserVerification: Bool = true) -> WebAuthnError.Code?
    {
        refusal {
            _ = try relyingParty.verifyRegistration(
                response, challenge: challenge ?? self.challenge, requireUserVerification: requireUserVerification)
        }
    }

    @Test(
        "ES256, EdDSA and RS256 register with attestation none and with packed self attestation",
        arguments: [COSEAlgorithm.es256, .edDSA, .rs256], [SoftAttestation.none, .packedSelf])
    func happyPaths(algorithm: COSEAlgorithm, attestation: SoftAttestation) throws {
        let (response, credential) = authenticator.makeCredential(
            rpID: Self.rpID, origin: Self.origin, challenge: challenge, userHandle: userHandle, algorithm: algorithm,
            attestation: attestation, flags: .synced, signCount: 5)
        let verified = try relyingParty.verifyRegistration(response, challenge: challenge)
        #expect(verified.credentialID == credential.id)
        #expect(verified.publicKey == credential.publicKey)
        #expect(verified.algorithm == algorithm)
        #expect(verified.signCount == 5)
        #expect(verified.userVerified && verified.backupEligible && verified.backedUp)
        #expect(verified.aaguid == [UInt8](repeating: 0, count: 16))
        #expect(verified.attestationFormat == (attestation == .none ? "none" : "packed"))
        #expect(verified.transports == ["internal", "hybrid"])
    }

    @Test("the credential type must be public-key, and the client data type webauthn.create")
    func types() {
        var response = register()
        response.type = "password"
        #expect(code(response) == .type)
        #expect(code(register(clientDataType: "webauthn.get")) == .type)
        #expect(code(register(clientDataType: "webauthn.create ")) == .type)
    }

    @Test("another challenge is refused, also one that differs only in its last byte or length")
    func wrongChallenge() {
        let response = register()
        #expect(code(response, challenge: Array(challenge.dropLast()) + [0xFF]) == .challenge)
        #expect(code(response, challenge: Array(challenge.dropLast())) == .challenge)
        #expect(code(response, challenge: []) == .challenge)
    }

    @Test("an origin not listed is refused: another host, scheme or port, a trailing slash, upper case, a subdomain")
    func wrongOrigin() {
        for origin in [
            "https://evil.example", "http://app.example.com", "https://app.example.com:8443", "https://app.example.com/",
            "https://APP.example.com", "https://sub.app.example.com", "https://example.com", "http://localhost:8081", "null", "",
            "android:apk-key-hash:" + Base64URL.encode(SHA256.hash(data: Array("another certificate".utf8))),
        ] {
            #expect(code(register(origin: origin)) == .origin, "\(origin)")
        }
    }

    @Test("the listed web origins and the Android app's apk-key-hash origin are accepted")
    func allowedOrigins() throws {
        for origin in [Self.origin, "http://localhost:8080", Self.android] {
            #expect(code(register(origin: origin)) == nil, "\(origin)")
        }
    }

    @Test("a call from a cross-origin frame is refused (crossOrigin true, or a topOrigin)")
    func crossOriginFrames() {
        #expect(code(register(crossOrigin: true)) == .origin)
        #expect(code(register(topOrigin: "https://evil.example")) == .origin)
        #expect(code(register(crossOrigin: nil)) == nil)
    }

    @Test("authenticator data for another RP id is refused")
    func wrongRPID() {
        #expect(code(register(rpID: "evil.example")) == .rpIDHash)
        #expect(code(register(rpID: "app.example.com")) == .rpIDHash)
    }

    @Test("UP clear is refused; UV clear is refused when required and accepted when not")
    func userPresenceAndVerification() throws {
        #expect(code(register(flags: SoftFlags(userPresent: false))) == .userPresence)
        let unverified = register(flags: SoftFlags(userVerified: false))
        #expect(code(unverified) == .userVerification)
        let verified = try relyingParty.verifyRegistration(unverified, challenge: challenge, requireUserVerification: false)
        #expect(!verified.userVerified)
    }

    @Test("BE and BS are read; BS without BE is malformed")
    func backupFlags() throws {
        #expect(code(register(flags: SoftFlags(backupEligible: false, backedUp: true))) == .malformed)
        let eligible = try relyingParty.verifyRegistration(register(flags: SoftFlags(backupEligible: true)), challenge: challenge)
        #expect(eligible.backupEligible && !eligible.backedUp)
        let deviceBound = try relyingParty.verifyRegistration(register(), challenge: challenge)
        #expect(!deviceBound.backupEligible && !deviceBound.backedUp)
    }

    @Test("id and rawId must agree, and be the credential id in the authenticator data")
    func credentialIDs() {
        var response = register()
        response.id = Base64URL.encode([1, 2, 3])
        #expect(code(response) == .credential)
        response.rawId = response.id
        #expect(code(response) == .credential)
        var unpadded = register()
        unpadded.id += "="
        #expect(code(unpadded) == .malformed)
        var empty = register()
        empty.id = ""
        empty.rawId = ""
        #expect(code(empty) == .credential)
    }

    @Test("attestation formats other than none and packed are refused; none must have an empty statement")
    func otherFormats() {
        for format in ["fido-u2f", "tpm", "android-key", "android-safetynet", "apple", "", "None"] {
            #expect(code(register(attestation: .custom(format: format, statement: .map([])))) == .attestation, "\(format)")
        }
        #expect(code(register(attestation: .custom(format: "none", statement: .map([(.text("alg"), .integer(-7))])))) == .attestation)
        #expect(code(register(attestation: .custom(format: "none", statement: .array([])))) == .malformed)
    }

    @Test(
        "packed self attestation with another alg, a bad signature, or an ECDAA key is refused", arguments: [COSEAlgorithm.es256, .edDSA])
    func packedSelfRefusals(algorithm: COSEAlgorithm) {
        #expect(code(register(algorithm: algorithm, attestation: .packedSelfClaiming(algorithm: -257))) == .attestation)
        #expect(code(register(algorithm: algorithm, attestation: .packedSelfClaiming(algorithm: -35))) == .attestation)
        #expect(code(register(algorithm: algorithm, attestation: .packedSelfBadSignature)) == .attestation)
        #expect(
            code(register(algorithm: algorithm, attestation: .custom(format: "packed", statement: .map([(.text("alg"), .integer(-7))]))))
                == .attestation)
        let ecdaa = CBORValue.map([(.text("alg"), .integer(-7)), (.text("sig"), .bytes([1])), (.text("ecdaaKeyId"), .bytes([2]))])
        #expect(code(register(algorithm: algorithm, attestation: .custom(format: "packed", statement: ecdaa))) == .attestation)
    }

    @Test("packed self attestation signed over other client data is refused")
    func packedSelfOverOtherData() throws {
        // The statement of one registration moved into another's attestation object.
        let first = register(attestation: .packedSelf)
        let second = register(attestation: .packedSelf)
        let firstObject = try CBORDecoder().decode(Base64URL.decode(first.response.attestationObject)!)
        let secondObject = try CBORDecoder().decode(Base64URL.decode(second.response.attestationObject)!)
        var spliced = second
        spliced.response.attestationObject = Base64URL.encode(
            CBORValue.map([
                (.text("fmt"), .text("packed")), (.text("attStmt"), firstObject["attStmt"]!),
                (.text("authData"), secondObject["authData"]!),
            ])
            .encoded)
        #expect(code(spliced) == .attestation)
    }

    @Test("packed attestation with a certificate chain (x5c) is refused: the service asks for none")
    func packedWithCertificate() {
        #expect(code(register(attestation: .packedWithCertificate)) == .attestation)
    }

    @Test("authenticator data with extension outputs is read; bytes that no flag announces are malformed")
    func extensionsAndTrailingBytes() throws {
        let extensions = CBORValue.map([(.text("credProtect"), .unsigned(2))])
        let verified = try relyingParty.verifyRegistration(register(extensions: extensions), challenge: challenge)
        #expect(verified.algorithm == .es256)

        let response = register()
        let object = try CBORDecoder().decode(Base64URL.decode(response.response.attestationObject)!)
        var longer = response
        longer.response.attestationObject = Base64URL.encode(
            CBORValue.map([
                (.text("fmt"), .text("none")), (.text("attStmt"), .map([])),
                (.text("authData"), .bytes(object["authData"]!.bytesValue! + [0])),
            ])
            .encoded)
        #expect(code(longer) == .malformed)
    }

    @Test("an attestation object without a credential (AT clear), or that does not parse, is malformed")
    func missingCredential() throws {
        let response = register()
        let object = try CBORDecoder().decode(Base64URL.decode(response.response.attestationObject)!)
        let authData = object["authData"]!.bytesValue!
        var header = Array(authData.prefix(37))
        header[32] &= ~0x40
        var bare = response
        bare.response.attestationObject = Base64URL.encode(
            CBORValue.map([(.text("fmt"), .text("none")), (.text("attStmt"), .map([])), (.text("authData"), .bytes(header))]).encoded)
        #expect(code(bare) == .malformed)

        var garbage = response
        garbage.response.attestationObject = Base64URL.encode([0xA0])
        #expect(code(garbage) == .malformed)
        garbage.response.attestationObject = "not base64url!"
        #expect(code(garbage) == .malformed)
        var badClientData = response
        badClientData.response.clientDataJSON = Base64URL.encode(Array("{\"type\":\"webauthn.create\"}".utf8))
        #expect(code(badClientData) == .malformed)
    }

    @Test("a flipped byte in the authenticator data is refused (for packed self attestation, by its signature)")
    func flippedAuthenticatorData() throws {
        let response = register(attestation: .packedSelf)
        let object = try CBORDecoder().decode(Base64URL.decode(response.response.attestationObject)!)
        var authData = object["authData"]!.bytesValue!
        // The counter's last byte: still well-formed, so only the signature catches it.
        authData[36] ^= 0x01
        var flipped = response
        flipped.response.attestationObject = Base64URL.encode(
            CBORValue.map([(.text("fmt"), object["fmt"]!), (.text("attStmt"), object["attStmt"]!), (.text("authData"), .bytes(authData))])
                .encoded)
        #expect(code(flipped) == .attestation)
    }

    @Test("the checks run in order: with everything wrong, the first refusal is the credential id's, then type, then challenge")
    func order() {
        var response = register(flags: SoftFlags(userPresent: false), rpID: "evil.example", origin: "https://evil.example")
        #expect(code(response, challenge: [9]) == .challenge)
        response.type = "other"
        #expect(code(response, challenge: [9]) == .type)
        response.id = "AA"
        #expect(code(response, challenge: [9]) == .credential)
        #expect(code(register(rpID: "evil.example", origin: "https://evil.example")) == .origin)
        #expect(code(register(flags: SoftFlags(userPresent: false), rpID: "evil.example")) == .rpIDHash)
    }
}
