import Foundation
import LedgerCrypto
import Testing

/// Hashes made by the libraries other systems use (scripts/foreign-hash-fixtures.py: PyPI's
/// bcrypt, argon2-cffi, Django's hashers, passlib), checked by this project's code.
@Suite("Imported password hashes")
struct ForeignPasswordHashTests {
    struct Fixture: Decodable, Sendable, CustomTestStringConvertible {
        let form: String
        let library: String
        let password: String
        let hash: String

        /// How the test run names a case: never its password (the run's output is scanned for them).
        var testDescription: String { "\(library) \(form), \(password.count) characters" }
    }

    static let fixtures: [Fixture] = {
        guard let url = Bundle.module.url(forResource: "Fixtures/foreign-hashes", withExtension: "json"),
            let data = try? Data(contentsOf: url)
        else { return [] }
        return (try? JSONDecoder().decode([Fixture].self, from: data)) ?? []
    }()

    @Test("every form, made by its ecosystem's library, verifies its password and refuses others", arguments: fixtures)
    func verifies(_ fixture: Fixture) throws {
        let hash = try #require(ForeignPasswordHash(fixture.hash), "\(fixture.library) \(fixture.form) not read")
        #expect(hash.form.rawValue == fixture.form)
        #expect(try hash.verify(fixture.password), "\(fixture.library) \(fixture.form)")
        #expect(try !hash.verify(fixture.password + "x"))
        #expect(try !hash.verify(""))
        #expect(try !hash.verify(String(fixture.password.dropLast())))
    }

    @Test("the fixtures cover every form")
    func coverage() {
        #expect(Set(Self.fixtures.map(\.form)) == Set(ForeignPasswordHash.Form.allCases.map(\.rawValue)))
        #expect(Set(Self.fixtures.map(\.library)).count >= 5)
    }

    @Test("a hostile import cannot make one check cost minutes: costs beyond the limits, and malformed hashes, are not read")
    func refusesHostileCosts() {
        for hostile in [
            "$2b$31$jCEo5YmfAPOOUygzhue03e0EQE6eOU/XEX/iGW/WVqBIaFjWsoX9q",
            "$argon2id$v=19$m=4194304,t=2,p=2$eetvXMQiFSdyUQMaUMGe/A$Zhn3jNd95r1ws/Kh3MzHCH6jZhTGssLiG0yvmN8ugYM",
            "$argon2id$v=19$m=1024,t=1000,p=2$eetvXMQiFSdyUQMaUMGe/A$Zhn3jNd95r1ws/Kh3MzHCH6jZhTGssLiG0yvmN8ugYM",
            "pbkdf2_sha256$2000000000$seasalt42$op6SgMXvwDlhYdnRiaKLnN5vtGsPvRWQPPWwc3Ehpu0=",
            "$scrypt$ln=20,r=32,p=1$BKDUeu9dizEG4NzbW8t5jw$Ten1qcfw3uM/HkZKFgnfZLIjYwGWuDLkt5O7QciF0vM",
            "$2b$04$short", "pbkdf2_sha256$1000$salt$", "$argon2d$v=19$m=1024,t=2,p=2$c2FsdA$aGFzaA", "md5$abc$def",
            "$1$saltsalt$hash", "plain-text", "",
            "$firebase-scrypt$r=8,m=30$Bw==$c2lnbmVy$c2FsdA==$aGFzaGVk",
            // Work beyond the limits through `p`, SHA-1's blocks or Argon2's lanes; forms libargon2
            // or OpenSSL would refuse at every sign-in (keys out of order, m < 8p, N ≥ 2^(16r)).
            "$scrypt$ln=17,r=16,p=16$BKDUeu9dizEG4NzbW8t5jw$Ten1qcfw3uM/HkZKFgnfZLIjYwGWuDLkt5O7QciF0vM",
            "$scrypt$ln=16,r=1,p=1$BKDUeu9dizEG4NzbW8t5jw$Ten1qcfw3uM/HkZKFgnfZLIjYwGWuDLkt5O7QciF0vM",
            "$pbkdf2-sha1$i=5000000,l=64$c2FsdHNhbHRzYWx0$" + String(repeating: "A", count: 86),
            "$argon2id$v=19$m=65536,t=2,p=16$eetvXMQiFSdyUQMaUMGe/A$Zhn3jNd95r1ws/Kh3MzHCH6jZhTGssLiG0yvmN8ugYM",
            "$argon2id$v=19$t=2,m=1024,p=2$eetvXMQiFSdyUQMaUMGe/A$Zhn3jNd95r1ws/Kh3MzHCH6jZhTGssLiG0yvmN8ugYM",
            "$argon2id$v=19$m=8,t=2,p=2$eetvXMQiFSdyUQMaUMGe/A$Zhn3jNd95r1ws/Kh3MzHCH6jZhTGssLiG0yvmN8ugYM",
            "$argon2id$v=19$m=1024,t=2,p=2$c2FsdA$Zhn3jNd95r1ws/Kh3MzHCH6jZhTGssLiG0yvmN8ugYM",
            "$firebase-scrypt$r=64,m=14$Bw==$c2lnbmVy$c2FsdA==$aGFzaGVk",
            "$firebase-scrypt$r=8,m=14$Bw==$c2lnbmVy$c2FsdA==$aGFzaA==",
        ] {
            #expect(ForeignPasswordHash(hostile) == nil, "\(hostile)")
        }
    }

    @Test("a password with a NUL byte never matches a bcrypt hash of its prefix")
    func nulByte() throws {
        let fixture = try #require(Self.fixtures.first { $0.form == "bcrypt" })
        let hash = try #require(ForeignPasswordHash(fixture.hash))
        #expect(try !hash.verify(fixture.password + "\u{0}tail"))
    }

    @Test("a Firebase user's hash and salt, with the project's hash config, make the string that checks their password")
    func firebaseFromExport() throws {
        let fixture = try #require(Self.fixtures.first { $0.form == "firebase_scrypt" })
        let parts = fixture.hash.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        let encoded = try #require(
            FirebaseScrypt.encoded(
                passwordHash: parts[6], salt: parts[5], signerKey: parts[4], saltSeparator: parts[3], rounds: 8, memoryCost: 10))
        #expect(try ForeignPasswordHash(encoded)?.verify(fixture.password) == true)
        #expect(
            FirebaseScrypt.encoded(
                passwordHash: parts[6], salt: parts[5], signerKey: parts[4], saltSeparator: parts[3], rounds: 8, memoryCost: 21) == nil)
        #expect(
            FirebaseScrypt.encoded(
                passwordHash: "not base64!", salt: parts[5], signerKey: parts[4], saltSeparator: parts[3], rounds: 8, memoryCost: 10)
                == nil)
    }
}
