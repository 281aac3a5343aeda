import Foundation
import LedgerCore
import LedgerCrypto
import Testing

@Suite("Crypto primitives (OpenSSL)")
struct PrimitiveTests {
    @Test("SHA-256 matches the FIPS 180-2 test vector")
    func sha256() {
        #expect(Hex.encode(SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Hex.encode(SHA256.hash([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("HMAC-SHA256 matches RFC 4231 test case 2")
    func hmac() {
        let mac = HMACSHA256.authenticate(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(Hex.encode(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test("AES-256-GCM round-trips and rejects a flipped bit or other associated data")
    func aesGCM() throws {
        let key = try SecureRandom.bytes(32)
        let nonce = try SecureRandom.bytes(12)
        let plaintext = Array("the quick brown fox".utf8)
        let sealed = try AESGCM.seal(key: key, nonce: nonce, plaintext: plaintext, additionalData: [1, 2, 3])
        #expect(sealed.count == plaintext.count + 16)
        #expect(try AESGCM.open(key: key, nonce: nonce, sealed: sealed, additionalData: [1, 2, 3]) == plaintext)
        var tampered = sealed
        tampered[0] ^= 1
        #expect(throws: CryptoError.self) { try AESGCM.open(key: key, nonce: nonce, sealed: tampered, additionalData: [1, 2, 3]) }
        #expect(throws: CryptoError.self) { try AESGCM.open(key: key, nonce: nonce, sealed: sealed, additionalData: [9]) }
        #expect(throws: CryptoError.self) { try AESGCM.seal(key: [1, 2], nonce: nonce, plaintext: plaintext, additionalData: []) }
    }

    @Test("one opener opens many messages under its key, and a failure leaves it usable")
    func aesGCMOpener() throws {
        let key = try DataKey.generate()
        let opener = try key.makeOpener()
        let messages = (0..<5).map { Array("payload \($0) of the page".utf8) }
        let events = messages.map { _ in UUID() }
        let sealed = try zip(messages, events).map { try key.seal($0, eventID: $1) }
        var tampered = sealed[2]
        tampered[tampered.count - 1] ^= 1
        for (index, ciphertext) in sealed.enumerated() {
            if index == 2 {
                #expect(throws: CryptoError.self) { try opener.open(tampered, eventID: events[2]) }
                #expect(throws: CryptoError.self) { try opener.open(ciphertext, eventID: events[1]) }
            }
            #expect(try opener.open(ciphertext, eventID: events[index]) == messages[index])
        }
        #expect(try opener.open(key.seal([], eventID: events[0]), eventID: events[0]) == [])
        #expect(throws: CryptoError.self) { try opener.open(Array(sealed[0].prefix(20)), eventID: events[0]) }
    }

    @Test("constant-time comparison")
    func constantTime() {
        #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2]))
        #expect(ConstantTime.equals([], []))
    }

    @Test("random bytes differ and uniform draws stay in range")
    func random() throws {
        #expect(try SecureRandom.bytes(32) != SecureRandom.bytes(32))
        for _ in 0..<1000 { #expect(try SecureRandom.uniform(below: 10) < 10) }
        for _ in 0..<1000 { #expect(try SecureRandom.uniform64(below: 1_000_000_000_000) < 1_000_000_000_000) }
    }
}

@Suite("Envelope encryption")
struct EnvelopeTests {
    @Test("a wrapped data key unwraps only under the same master key and subject")
    func wrapping() throws {
        let master = try MasterKey.generate()
        let subject = UUID()
        let dataKey = try DataKey.generate()
        let wrapped = try master.wrap(dataKey, subjectID: subject)
        let unwrapped = try master.unwrap(wrapped, subjectID: subject)
        let eventID = UUID()
        #expect(try unwrapped.open(dataKey.seal([1, 2, 3], eventID: eventID), eventID: eventID) == [1, 2, 3])

        let other = try MasterKey.generate()
        let wrongMaster = #expect(throws: CryptoError.self) { try other.unwrap(wrapped, subjectID: subject) }
        #expect(wrongMaster?.code == .wrongMasterKey)
        #expect(wrongMaster?.reason.contains(master.keyID) == true)
        let wrongSubject = #expect(throws: CryptoError.self) { try master.unwrap(wrapped, subjectID: UUID()) }
        #expect(wrongSubject?.code == .authenticationFailed)
    }

    @Test("payload sealing is deterministic per event and bound to the event id")
    func sealing() throws {
        let key = try DataKey.generate()
        let eventID = UUID()
        let plaintext = Array(#"{"email":"a@b.c"}"#.utf8)
        let first = try key.seal(plaintext, eventID: eventID)
        #expect(try key.seal(plaintext, eventID: eventID) == first)
        #expect(try key.seal(plaintext, eventID: UUID()) != first)
        #expect(try key.seal(Array("other".utf8), eventID: eventID) != first)
        #expect(!Hex.encode(first).contains(Hex.encode(plaintext)))
        #expect(throws: CryptoError.self) { try key.open(first, eventID: UUID()) }
    }

    @Test("a master key parses from base64 and refuses other lengths")
    func masterKeyParsing() throws {
        let key = try MasterKey.generate()
        #expect(try MasterKey(base64: key.base64).keyID == key.keyID)
        #expect(throws: CryptoError.self) { try MasterKey(base64: "dGVzdA==") }
        #expect(throws: CryptoError.self) { try MasterKey(base64: "not base64!") }
    }
}

@Suite("Encodings")
struct EncodingTests {
    @Test("hex and base64url round-trip and reject junk")
    func roundTrips() {
        let bytes: [UInt8] = [0, 1, 0xfe, 0xff, 0x7f]
        #expect(Hex.decode(Hex.encode(bytes)) == bytes)
        #expect(Hex.decode("0g") == nil)
        #expect(Hex.decode("abc") == nil)
        #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        #expect(Base64URL.decode("a+b/") == nil)
        for length in 0..<12 {
            let input = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 250) }
            let foundation = Data(input).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(input) == foundation)
            #expect(Base64URL.encode(input.lazy.map { $0 }) == foundation)
            #expect(Hex.decode(utf8: Array(Hex.encode(input).utf8)) == input)
        }
        #expect(Hex.decode(utf8: Array("0x".utf8)) == nil)
    }
}

@Suite("scrypt password hashes")
struct ScryptTests {
    @Test("matches RFC 7914's test vector (N=1024, r=8, p=16)")
    func rfcVector() throws {
        let derived = try Scrypt(logN: 10, blockSize: 8, parallelism: 16)
            .derive(Array("password".utf8), salt: Array("NaCl".utf8), length: 64)
        #expect(
            Hex.encode(derived)
                == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
        )
    }

    @Test("hash strings describe their cost and verify only the right password")
    func hashAndVerify() throws {
        let encoded = try Scrypt(logN: 4).hash("correct horse")
        #expect(encoded.hasPrefix("$scrypt$ln=4,r=8,p=1$"))
        #expect(try Scrypt.verify("correct horse", against: encoded))
        #expect(try !Scrypt.verify("correct horsf", against: encoded))
        #expect(Scrypt.parameters(of: encoded) == Scrypt(logN: 4))
        #expect(try Scrypt(logN: 4).hash("correct horse") != encoded)
        #expect(throws: CryptoError.self) { try Scrypt.verify("x", against: "$2b$10$bcrypt") }
    }
}
