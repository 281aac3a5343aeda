import LedgerCore
import LedgerWebAuthn
import Testing

/// WebAuthn Level 3 §16's test vectors through the relying party (see `SpecVector`).
@Suite("WebAuthn §16 test vectors")
struct SpecVectorTests {
    let relyingParty = SpecVector.relyingParty

    @Test("none attestation, ES256: registered; the vector's authenticator did not verify the user, so UV required refuses it")
    func noneES256() throws {
        let vector = SpecVector.noneES256
        let registration = try relyingParty.verifyRegistration(
            vector.registration, challenge: SpecVector.bytes(vector.challenge), requireUserVerification: false)
        #expect(registration.credentialID == SpecVector.bytes(vector.credentialID))
        #expect(registration.algorithm == .es256)
        #expect(registration.attestationFormat == "none")
        #expect(registration.aaguid == SpecVector.bytes("8446ccb9ab1db374750b2367ff6f3a1f"))
        #expect(!registration.userVerified && registration.backupEligible && registration.backedUp)
        #expect(registration.signCount == 0)
        #expect(registration.publicKey == (try vector.publicKey))
        #expect(
            refusal { _ = try relyingParty.verifyRegistration(vector.registration, challenge: SpecVector.bytes(vector.challenge)) }
                == .userVerification)
    }

    @Test("packed self attestation, ES256: registered, with its statement's signature checked")
    func packedSelfES256() throws {
        let vector = SpecVector.packedSelfES256
        let registration = try relyingParty.verifyRegistration(vector.registration, challenge: SpecVector.bytes(vector.challenge))
        #expect(registration.attestationFormat == "packed")
        #expect(registration.userVerified && registration.backupEligible && registration.backedUp)
        #expect(registration.credentialID == SpecVector.bytes(vector.credentialID))
    }

    @Test("a credential id of 1023 bytes, the most allowed, registers and signs in")
    func longCredentialID() throws {
        let vector = SpecVector.longCredentialID
        let registration = try relyingParty.verifyRegistration(
            vector.registration, challenge: SpecVector.bytes(vector.challenge), requireUserVerification: false)
        #expect(registration.credentialID.count == 1023)
        let assertion = try relyingParty.verifyAssertion(
            vector.assertion, challenge: SpecVector.bytes(vector.assertionChallenge), publicKey: registration.publicKey, storedSignCount: 0)
        #expect(assertion.credentialID.count == 1023)
    }

    @Test(
        "each vector's assertion verifies with its registration's key: ES256, RS256 and EdDSA",
        arguments: [
            (SpecVector.noneES256, COSEAlgorithm.es256), (.packedSelfES256, .es256), (.packedES256, .es256), (.packedRS256, .rs256),
            (.packedEdDSA, .edDSA), (.tpmES256, .es256), (.androidKeyES256, .es256), (.appleES256, .es256), (.fidoU2FES256, .es256),
        ])
    func assertions(vector: SpecVector, algorithm: COSEAlgorithm) throws {
        let publicKey = try vector.publicKey
        #expect(try COSEKey(cbor: publicKey).algorithm == algorithm, "\(vector.name)")
        let challenge = SpecVector.bytes(vector.assertionChallenge)
        let assertion = try relyingParty.verifyAssertion(
            vector.assertion, challenge: challenge, publicKey: publicKey, storedSignCount: 0, requireUserVerification: false)
        #expect(assertion.credentialID == SpecVector.bytes(vector.credentialID))
        #expect(assertion.signCount == 0)
        #expect(assertion.userHandle == nil)

        // A flipped bit anywhere in the signature refuses it.
        var forged = vector.assertion
        var signature = SpecVector.bytes(vector.signature)
        signature[signature.count - 1] ^= 0x01
        forged.response.signature = Base64URL.encode(signature)
        #expect(
            refusal {
                _ = try relyingParty.verifyAssertion(
                    forged, challenge: challenge, publicKey: publicKey, storedSignCount: 0, requireUserVerification: false)
            } == .signature, "\(vector.name)")
        // So does another challenge, before any signature is checked.
        #expect(
            refusal {
                _ = try relyingParty.verifyAssertion(
                    vector.assertion, challenge: SpecVector.bytes(vector.challenge), publicKey: publicKey, storedSignCount: 0,
                    requireUserVerification: false)
            } == .challenge)
    }

    @Test("crossOrigin true and a topOrigin in the client data are refused, at registration and sign-in")
    func crossOrigin() throws {
        for vector in [SpecVector.crossOrigin, .topOrigin] {
            #expect(
                refusal {
                    _ = try relyingParty.verifyRegistration(
                        vector.registration, challenge: SpecVector.bytes(vector.challenge), requireUserVerification: false)
                } == .origin, "\(vector.name)")
            let publicKey = try vector.publicKey
            #expect(
                refusal {
                    _ = try relyingParty.verifyAssertion(
                        vector.assertion, challenge: SpecVector.bytes(vector.assertionChallenge), publicKey: publicKey,
                        storedSignCount: 0, requireUserVerification: false)
                } == .origin, "\(vector.name)")
        }
    }

    @Test(
        "attestation with a certificate chain or of another format is refused; ES384 and Ed448 keys are unsupported",
        arguments: [
            (SpecVector.packedES256, WebAuthnError.Code.attestation), (.packedRS256, .attestation), (.packedEdDSA, .attestation),
            (.tpmES256, .attestation), (.androidKeyES256, .attestation), (.appleES256, .attestation), (.fidoU2FES256, .attestation),
            (.packedES384, .unsupportedAlgorithm), (.packedEd448, .unsupportedAlgorithm),
        ])
    func refusedAttestations(vector: SpecVector, code: WebAuthnError.Code) {
        #expect(
            refusal {
                _ = try relyingParty.verifyRegistration(
                    vector.registration, challenge: SpecVector.bytes(vector.challenge), requireUserVerification: false)
            } == code, "\(vector.name)")
    }
}
