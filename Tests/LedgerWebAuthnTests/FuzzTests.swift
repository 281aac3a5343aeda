import LedgerCore
import LedgerWebAuthn
import LedgerWebAuthnTesting
import Testing

/// Seeded fuzzing of everything that reads a browser's bytes: the CBOR decoder, authenticator
/// data, attestation objects, COSE keys, client data and both ceremonies only ever return or
/// throw `WebAuthnError` (typed throws make any other error impossible; a trap would end the
/// run). A failing case replays from its seed.
@Suite("Fuzzing")
struct FuzzTests {
    static let rpID = "example.com"
    static let origin = "https://example.com"
    static let challenge: [UInt8] = Array(1...32)

    /// Valid inputs of each kind, the seeds of the mutations.
    struct Corpus {
        var registrations: [RegistrationResponseJSON] = []
        var attestationObjects: [[UInt8]] = []
        var keys: [[UInt8]] = []
        var assertions: [(response: AuthenticationResponseJSON, key: [UInt8])] = []
        var authenticatorData: [[UInt8]] = []
        var clientData: [[UInt8]] = []

        var all: [[UInt8]] { attestationObjects + keys + authenticatorData + clientData }
    }

    static let corpus: Corpus = {
        var corpus = Corpus()
        let authenticator = SoftAuthenticator()
        for algorithm in [COSEAlgorithm.es256, .edDSA, .rs256] {
            for attestation in [SoftAttestation.none, .packedSelf] {
                let extensions: CBORValue? = attestation == .none ? .map([(.text("credProtect"), .unsigned(2))]) : nil
                let (response, credential) = authenticator.makeCredential(
                    rpID: rpID, origin: origin, challenge: challenge, userHandle: [7, 7], algorithm: algorithm, attestation: attestation,
                    flags: .synced, extensions: extensions)
                corpus.registrations.append(response)
                corpus.attestationObjects.append(Base64URL.decode(response.response.attestationObject)!)
                corpus.keys.append(credential.publicKey)
                let assertion = authenticator.getAssertion(credential: credential, challenge: challenge)
                corpus.assertions.append((assertion, credential.publicKey))
                corpus.authenticatorData.append(Base64URL.decode(assertion.response.authenticatorData)!)
                corpus.authenticatorData.append(Base64URL.decode(response.response.authenticatorData!)!)
                corpus.clientData.append(Base64URL.decode(assertion.response.clientDataJSON)!)
            }
        }
        return corpus
    }()

    /// Bytes that CBOR heads make interesting: lengths of every width, indefinite, tags, floats, breaks.
    static let interesting: [UInt8] = [
        0x00, 0x01, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1F, 0x20, 0x3B, 0x40, 0x5B, 0x5F, 0x60, 0x7B, 0x7F, 0x80, 0x9B, 0x9F, 0xA0, 0xBB, 0xBF,
        0xC0, 0xD8, 0xF4, 0xF7, 0xF9, 0xFB, 0xFF,
    ]

    /// One mutation of `input`: bit flips, a truncation, a splice with another input, an
    /// interesting byte, an insertion or a deletion.
    static func mutate(_ input: [UInt8], using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        guard !bytes.isEmpty else { return [UInt8.random(in: 0...255, using: &generator)] }
        switch Int.random(in: 0..<6, using: &generator) {
        case 0:
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^= 1 << UInt8.random(in: 0...7, using: &generator)
            }
        case 1:
            bytes.removeLast(Int.random(in: 1...bytes.count, using: &generator))
        case 2:
            let other = corpus.all.randomElement(using: &generator)!
            bytes =
                Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
                + other.suffix(Int.random(in: 0...other.count, using: &generator))
        case 3:
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = interesting.randomElement(using: &generator)!
        case 4:
            let insertion = (0..<Int.random(in: 1...8, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            bytes.insert(contentsOf: insertion, at: Int.random(in: 0...bytes.count, using: &generator))
        default:
            let start = Int.random(in: 0..<bytes.count, using: &generator)
            bytes.removeSubrange(start..<min(bytes.count, start + Int.random(in: 1...16, using: &generator)))
        }
        return bytes
    }

    /// Runs every reader over `bytes`; the outcome is a value or a `WebAuthnError`.
    static func readAll(_ bytes: [UInt8]) {
        _ = try? CBORDecoder().decode(bytes)
        _ = try? CBORDecoder().decodePrefix(bytes[...])
        _ = try? AuthenticatorData(bytes: bytes)
        _ = try? AttestationObject(bytes: bytes)
        _ = try? CollectedClientData(json: bytes)
        if let key = try? COSEKey(cbor: bytes) {
            _ = key.verify(signature: bytes, over: bytes)
        }
    }

    @Test("random bytes: every reader returns or refuses")
    func randomBytes() {
        var generator = SeededGenerator(seed: 45)
        for _ in 0..<4000 {
            let length = Int.random(in: 0...200, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Start a third of them with a map head, so the readers get past the first byte.
            if !bytes.isEmpty, Bool.random(using: &generator) { bytes[0] = 0xA0 | (bytes[0] & 0x07) }
            Self.readAll(bytes)
        }
    }

    @Test("mutated attestation objects, COSE keys, authenticator data and client data: every reader returns or refuses")
    func mutatedInputs() {
        var generator = SeededGenerator(seed: 8949)
        let seeds = Self.corpus.all
        for _ in 0..<8000 {
            var bytes = seeds.randomElement(using: &generator)!
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                bytes = Self.mutate(bytes, using: &generator)
            }
            Self.readAll(bytes)
        }
    }

    @Test(
        "mutated registrations: verification returns or refuses, and a packed self attestation never survives a change to its signed data")
    func mutatedRegistrations() {
        var generator = SeededGenerator(seed: 7_1)
        let relyingParty = RelyingParty(id: Self.rpID, origins: [Self.origin])
        var accepted = 0
        for _ in 0..<4000 {
            var response = Self.corpus.registrations.randomElement(using: &generator)!
            let original = Base64URL.decode(response.response.attestationObject)!
            let mutated = Self.mutate(original, using: &generator)
            response.response.attestationObject = Base64URL.encode(mutated)
            do {
                let verified = try relyingParty.verifyRegistration(response, challenge: Self.challenge)
                accepted += 1
                if verified.attestationFormat == "packed", mutated != original {
                    // The statement signs authData: only a change outside it (the statement's own encoding) may pass.
                    let before = try? AttestationObject(bytes: original).authenticatorData.raw
                    let after = try? AttestationObject(bytes: mutated).authenticatorData.raw
                    #expect(before == after, "a changed authData passed packed self attestation")
                }
            } catch {
                _ = error.code
            }
        }
        // Most mutations break the CBOR; some (an AAGUID bit under "none") do not matter.
        #expect(accepted < 4000)
    }

    @Test("mutated assertions: verification returns or refuses, and never accepts changed authenticator data, client data or signature")
    func mutatedAssertions() {
        var generator = SeededGenerator(seed: 7_2)
        let relyingParty = RelyingParty(id: Self.rpID, origins: [Self.origin])
        var codes = Set<WebAuthnError.Code>()
        for _ in 0..<4000 {
            var (response, key) = Self.corpus.assertions.randomElement(using: &generator)!
            let part = Int.random(in: 0..<3, using: &generator)
            let text = [response.response.authenticatorData, response.response.clientDataJSON, response.response.signature][part]
            let original = Base64URL.decode(text)!
            let mutated = Self.mutate(original, using: &generator)
            switch part {
            case 0: response.response.authenticatorData = Base64URL.encode(mutated)
            case 1: response.response.clientDataJSON = Base64URL.encode(mutated)
            default: response.response.signature = Base64URL.encode(mutated)
            }
            let outcome = refusal {
                _ = try relyingParty.verifyAssertion(response, challenge: Self.challenge, publicKey: key, storedSignCount: 0)
            }
            if mutated != original {
                #expect(outcome != nil, "a changed assertion verified")
            }
            if let outcome { codes.insert(outcome) }
        }
        // The mutations reach every stage, the signature included.
        #expect(codes.isSuperset(of: [.malformed, .rpIDHash, .challenge, .signature]), "\(codes)")
    }
}
