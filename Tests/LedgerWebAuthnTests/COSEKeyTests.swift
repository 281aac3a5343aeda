import Crypto
import LedgerCore
import LedgerWebAuthn
import LedgerWebAuthnTesting
import Testing

@Suite("COSE keys")
struct COSEKeyTests {
    /// One credential of each algorithm, made by the soft authenticator (RSA key generation is slow: once).
    static let credentials: [COSEAlgorithm: SoftCredential] = {
        let authenticator = SoftAuthenticator()
        var credentials: [COSEAlgorithm: SoftCredential] = [:]
        for algorithm in [COSEAlgorithm.es256, .edDSA, .rs256] {
            credentials[algorithm] =
                authenticator.makeCredential(
                    rpID: "example.com", origin: "https://example.com", challenge: [1], userHandle: [2], algorithm: algorithm
                ).credential
        }
        return credentials
    }()

    static func cose(_ entries: [(Int64, CBORValue)]) -> [UInt8] {
        CBORValue.map(entries.map { (.integer($0.0), $0.1) }).encoded
    }

    static func code(_ bytes: [UInt8]) -> WebAuthnError.Code? {
        refusal { _ = try COSEKey(cbor: bytes) }
    }

    @Test("each algorithm's key verifies its own signatures, and refuses another key's, another message's and garbage")
    func ownSignatures() throws {
        let message = Array("authenticator data || client data hash".utf8)
        for (algorithm, credential) in Self.credentials {
            let key = try COSEKey(cbor: credential.publicKey)
            #expect(key.algorithm == algorithm)
            let signature = credential.sign(message)
            #expect(key.verify(signature: signature, over: message), "\(algorithm)")
            #expect(!key.verify(signature: signature, over: message + [0]), "\(algorithm)")
            #expect(!key.verify(signature: [], over: message), "\(algorithm)")
            #expect(!key.verify(signature: [UInt8](repeating: 0, count: signature.count), over: message), "\(algorithm)")
            #expect(!key.verify(signature: signature + [0], over: message), "\(algorithm)")
            for (other, stranger) in Self.credentials where other != algorithm {
                #expect(!key.verify(signature: stranger.sign(message), over: message), "\(algorithm) accepted \(other)")
            }
            let sameAlgorithm = SoftAuthenticator().makeCredential(
                rpID: "example.com", origin: "https://example.com", challenge: [1], userHandle: [2],
                algorithm: algorithm == .rs256 ? .es256 : algorithm
            ).credential
            if algorithm != .rs256 {
                #expect(!key.verify(signature: sameAlgorithm.sign(message), over: message), "\(algorithm): another key")
            }
        }
    }

    @Test("an ES256 signature must be DER: the raw r||s form is refused")
    func es256NeedsDER() throws {
        let credential = try #require(Self.credentials[.es256])
        let key = try COSEKey(cbor: credential.publicKey)
        let der = credential.sign([1, 2, 3])
        let raw = try P256.Signing.ECDSASignature(derRepresentation: der).rawRepresentation
        #expect(!key.verify(signature: Array(raw), over: [1, 2, 3]))
    }

    /// RFC 8152 Appendix C.2.1 (cose-wg/Examples ecdsa-sig-01.json): a COSE_Sign1 by a P-256 key;
    /// the raw signature is converted to DER, the form WebAuthn uses.
    @Test("RFC 8152 C.2.1: the example's P-256 key verifies the example's ES256 signature")
    func rfc8152ECDSA() throws {
        let x = try #require(Base64URL.decode("usWxHK2PmfnHKwXPS54m0kTcGJ90UiglWiGahtagnv8"))
        let y = try #require(Base64URL.decode("IBOL-C3BttVivg-lSreASjpkttcsz-1rb7btKLv8EX4"))
        let toBeSigned = try #require(Hex.decode("846a5369676e61747572653145a2012603004054546869732069732074686520636f6e74656e742e"))
        let raw = try #require(
            Hex.decode(
                "eae868ecc176883766c5dc5ba5b8dca25dab3c2e56a551ce5705b793914348e1"
                    + "72727f48461fabbba2e343492ddecac3983686250bc68e9f1a7a07d41225b59f"))
        let der = Array(try P256.Signing.ECDSASignature(rawRepresentation: raw).derRepresentation)
        let key = try COSEKey(cbor: Self.cose([(1, .integer(2)), (3, .integer(-7)), (-1, .integer(1)), (-2, .bytes(x)), (-3, .bytes(y))]))
        #expect(key.verify(signature: der, over: toBeSigned))
        #expect(!key.verify(signature: der, over: Array(toBeSigned.dropLast())))
    }

    /// RFC 8032 §7.1, TEST 1: the empty message.
    @Test("RFC 8032 7.1 test 1: the Ed25519 key verifies the empty message's signature")
    func rfc8032Ed25519() throws {
        let x = try #require(Hex.decode("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"))
        let signature = try #require(
            Hex.decode(
                "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe2465514143"
                    + "8e7a100b"
            ))
        let key = try COSEKey(cbor: Self.cose([(1, .integer(1)), (3, .integer(-8)), (-1, .integer(6)), (-2, .bytes(x))]))
        #expect(key.algorithm == .edDSA)
        #expect(key.verify(signature: signature, over: []))
        #expect(!key.verify(signature: signature, over: [0]))
    }

    @Test("an RSA modulus below 2048 bits (or above 8192) is refused as unsupported; 2048 bits is accepted")
    func rsaSizes() throws {
        let e: [UInt8] = [1, 0, 1]
        func rsa(_ n: [UInt8]) -> [UInt8] { Self.cose([(1, .integer(3)), (3, .integer(-257)), (-1, .bytes(n)), (-2, .bytes(e))]) }
        // 2047 bits (odd, so only the size is wrong); 1024 bits; a leading zero byte adds no bit; 8200 bits; none.
        #expect(Self.code(rsa([0x7F] + [UInt8](repeating: 0xFF, count: 255))) == .unsupportedAlgorithm)
        #expect(Self.code(rsa([0xFF] + [UInt8](repeating: 0xFF, count: 127))) == .unsupportedAlgorithm)
        #expect(Self.code(rsa([0x00, 0x7F] + [UInt8](repeating: 0xFF, count: 255))) == .unsupportedAlgorithm)
        #expect(Self.code(rsa([0xFF] + [UInt8](repeating: 0xFF, count: 1024))) == .unsupportedAlgorithm)
        #expect(Self.code(rsa([])) == .unsupportedAlgorithm)
        // 2048 bits from a real key.
        let credential = try #require(Self.credentials[.rs256])
        #expect(try COSEKey(cbor: credential.publicKey).algorithm == .rs256)
        // Missing or empty exponent, and an exponent too long to be one.
        let n = [0xC0] + [UInt8](repeating: 0x01, count: 255)
        #expect(Self.code(Self.cose([(1, .integer(3)), (3, .integer(-257)), (-1, .bytes(n))])) == .malformed)
        #expect(Self.code(Self.cose([(1, .integer(3)), (3, .integer(-257)), (-1, .bytes(n)), (-2, .bytes([]))])) == .malformed)
        #expect(
            Self.code(Self.cose([(1, .integer(3)), (3, .integer(-257)), (-1, .bytes(n)), (-2, .bytes([UInt8](repeating: 1, count: 9)))]))
                == .malformed)
    }

    @Test("an EC point not on P-256, or coordinates of the wrong length, are refused")
    func pointNotOnCurve() throws {
        let credential = try #require(Self.credentials[.es256])
        let valid = try CBORDecoder().decode(credential.publicKey)
        let x = try #require(valid[-2]?.bytesValue)
        let y = try #require(valid[-3]?.bytesValue)
        func ec2(_ x: [UInt8], _ y: CBORValue) -> [UInt8] {
            Self.cose([(1, .integer(2)), (3, .integer(-7)), (-1, .integer(1)), (-2, .bytes(x)), (-3, y)])
        }
        #expect(Self.code(ec2(x, .bytes(y))) == nil)
        var offCurve = y
        offCurve[31] ^= 0x01
        #expect(Self.code(ec2(x, .bytes(offCurve))) == .malformed)
        #expect(Self.code(ec2([UInt8](repeating: 0, count: 32), .bytes([UInt8](repeating: 0, count: 32)))) == .malformed)
        // p itself, not reduced: never a coordinate.
        let p = try #require(Hex.decode("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff"))
        #expect(Self.code(ec2(p, .bytes(y))) == .malformed)
        #expect(Self.code(ec2(Array(x.dropFirst()), .bytes(y))) == .malformed)
        #expect(Self.code(ec2(x, .bytes([0] + y))) == .malformed)
        // A compressed point (y as its sign bit) is not accepted.
        #expect(Self.code(ec2(x, .bool(true))) == .malformed)
        #expect(Self.code(Self.cose([(1, .integer(1)), (3, .integer(-8)), (-1, .integer(6)), (-2, .bytes([1, 2, 3]))])) == .malformed)
    }

    @Test("an algorithm that does not go with the key type, another curve or an unknown algorithm is unsupported")
    func mismatches() throws {
        let credentials = Self.credentials
        let ec = try CBORDecoder().decode(try #require(credentials[.es256]).publicKey)
        let okp = try CBORDecoder().decode(try #require(credentials[.edDSA]).publicKey)
        func replacing(_ value: CBORValue, _ label: Int64, with new: CBORValue) -> [UInt8] {
            CBORValue.map(value.mapEntries!.map { $0.0 == .integer(label) ? ($0.0, new) : $0 }).encoded
        }
        #expect(Self.code(replacing(ec, 3, with: .integer(-8))) == .unsupportedAlgorithm)  // EC2 key, EdDSA
        #expect(Self.code(replacing(ec, 3, with: .integer(-257))) == .unsupportedAlgorithm)  // EC2 key, RS256
        #expect(Self.code(replacing(okp, 3, with: .integer(-7))) == .unsupportedAlgorithm)  // OKP key, ES256
        #expect(Self.code(replacing(ec, 1, with: .integer(3))) == .unsupportedAlgorithm)  // RSA kty, ES256
        #expect(Self.code(replacing(ec, 3, with: .integer(-35))) == .unsupportedAlgorithm)  // ES384
        #expect(Self.code(replacing(ec, 3, with: .integer(-36))) == .unsupportedAlgorithm)  // ES512
        #expect(Self.code(replacing(ec, -1, with: .integer(2))) == .unsupportedAlgorithm)  // P-384 curve
        #expect(Self.code(replacing(okp, -1, with: .integer(4))) == .unsupportedAlgorithm)  // X25519
        #expect(Self.code(replacing(okp, -1, with: .integer(7))) == .unsupportedAlgorithm)  // Ed448
        #expect(Self.code(replacing(ec, 1, with: .integer(4))) == .unsupportedAlgorithm)  // symmetric
        #expect(Self.code(replacing(ec, 3, with: .unsigned(UInt64.max))) == .malformed)
        #expect(Self.code(replacing(ec, 3, with: .text("ES256"))) == .malformed)
    }

    @Test("a key that is not a map, lacks kty or alg, or has trailing bytes is malformed")
    func malformed() throws {
        let credential = try #require(Self.credentials[.es256])
        let key = try CBORDecoder().decode(credential.publicKey)
        func without(_ label: Int64) -> [UInt8] { CBORValue.map(key.mapEntries!.filter { $0.0 != .integer(label) }).encoded }
        #expect(Self.code(without(1)) == .malformed)
        #expect(Self.code(without(3)) == .malformed)
        #expect(Self.code(without(-2)) == .malformed)
        #expect(Self.code(credential.publicKey + [0]) == .malformed)
        #expect(Self.code(CBORValue.array([]).encoded) == .malformed)
        #expect(Self.code([]) == .malformed)
        // Unknown labels (key_ops, kid) are ignored.
        let withKid = CBORValue.map(key.mapEntries! + [(.integer(2), .bytes([1, 2])), (.text("note"), .null)]).encoded
        #expect(Self.code(withKid) == nil)
    }
}
