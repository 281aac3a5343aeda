import Foundation
import LedgerCore
import LedgerCrypto
import Testing

@Suite("Ed25519 (OpenSSL)")
struct Ed25519Tests {
    /// RFC 8032 §7.1, TEST 1: the empty message.
    static let rfcSeed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
    static let rfcPublicKey = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
    static let rfcSignature =
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"

    @Test("RFC 8032 test vector 1: public key and signature of the empty message")
    func rfcVector() throws {
        let key = try Ed25519.PrivateKey(rawRepresentation: Hex.decode(Self.rfcSeed)!)
        #expect(Hex.encode(key.publicKey.rawRepresentation) == Self.rfcPublicKey)
        let signature = try key.signature(for: [])
        #expect(Hex.encode(signature) == Self.rfcSignature)
        #expect(key.publicKey.isValidSignature(signature, for: []))
    }

    @Test("a signature verifies under its key only, and only for its message")
    func signAndVerify() throws {
        let key = try Ed25519.PrivateKey.generate()
        let message = Array("ledger-checkpoint-v1".utf8)
        let signature = try key.signature(for: message)
        #expect(signature.count == Ed25519.signatureByteCount)
        #expect(key.publicKey.isValidSignature(signature, for: message))

        let stranger = try Ed25519.PrivateKey.generate()
        #expect(!stranger.publicKey.isValidSignature(signature, for: message))

        var tamperedMessage = message
        tamperedMessage[0] ^= 1
        #expect(!key.publicKey.isValidSignature(signature, for: tamperedMessage))
        var tamperedSignature = signature
        tamperedSignature[10] ^= 1
        #expect(!key.publicKey.isValidSignature(tamperedSignature, for: message))
        #expect(!key.publicKey.isValidSignature(Array(signature.prefix(63)), for: message))
    }

    @Test("PEM round trip in the forms openssl writes")
    func pemRoundTrip() throws {
        let key = try Ed25519.PrivateKey.generate()
        let privatePEM = try key.pemRepresentation
        #expect(privatePEM.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let reread = try Ed25519.PrivateKey(pemRepresentation: privatePEM)
        #expect(reread.publicKey == key.publicKey)

        let publicPEM = try key.publicKey.pemRepresentation
        #expect(publicPEM.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
        #expect(try Ed25519.PublicKey(pemRepresentation: publicPEM) == key.publicKey)

        // What `openssl genpkey -algorithm ed25519` and `openssl pkey -pubout` print for the RFC key.
        let opensslPrivate = """
            -----BEGIN PRIVATE KEY-----
            MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g
            -----END PRIVATE KEY-----

            """
        let opensslPublic = """
            -----BEGIN PUBLIC KEY-----
            MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=
            -----END PUBLIC KEY-----

            """
        let rfcKey = try Ed25519.PrivateKey(pemRepresentation: opensslPrivate)
        #expect(Hex.encode(rfcKey.publicKey.rawRepresentation) == Self.rfcPublicKey)
        #expect(try rfcKey.pemRepresentation == opensslPrivate)
        #expect(try Ed25519.PublicKey(pemRepresentation: opensslPublic) == rfcKey.publicKey)
        #expect(try rfcKey.publicKey.pemRepresentation == opensslPublic)
    }

    @Test("wrong key material is refused, and a private key never prints itself")
    func refusals() throws {
        #expect(throws: CryptoError.self) { try Ed25519.PrivateKey(rawRepresentation: [1, 2, 3]) }
        #expect(throws: CryptoError.self) { try Ed25519.PublicKey(rawRepresentation: [UInt8](repeating: 0, count: 31)) }
        #expect(throws: CryptoError.self) { try Ed25519.PrivateKey(pemRepresentation: "not a key") }
        let key = try Ed25519.PrivateKey.generate()
        // A public key's PEM is not a private key, and the other way round.
        #expect(throws: CryptoError.self) { try Ed25519.PrivateKey(pemRepresentation: key.publicKey.pemRepresentation) }
        #expect(throws: CryptoError.self) { try Ed25519.PublicKey(pemRepresentation: key.pemRepresentation) }
        let pemBody = try key.pemRepresentation.split(separator: "\n")[1]
        #expect(!"\(key)".contains(pemBody))
        #expect("\(key)".contains("redacted"))
    }

    @Test("incremental SHA-256 equals the one-shot digest")
    func incrementalSHA256() {
        let hasher = SHA256Hasher()
        hasher.update(Array("a".utf8))
        hasher.update([])
        hasher.update(Array("bc".utf8))
        #expect(hasher.finalize() == SHA256.hash(Array("abc".utf8)))
    }
}
