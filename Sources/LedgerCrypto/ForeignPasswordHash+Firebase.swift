import COpenSSL
import Foundation

/// Firebase Authentication's modified scrypt: `scrypt(password, salt ‖ salt separator,
/// N = 2^mem_cost, r = rounds, p = 1, 64 bytes)`, whose first 32 bytes key AES-256-CTR (a zero
/// counter block) over the project's signer key; the ciphertext is the stored hash. The salt is
/// the user's; the signer key, the separator and the costs are the project's "hash config".
///
/// Kept as one string so that an imported account's hash carries everything its check needs:
/// `$firebase-scrypt$r=8,m=14$<separator>$<signer key>$<salt>$<hash>`, each part in the
/// standard base64 Firebase's export and console show.
public struct FirebaseScrypt: Sendable, Hashable {
    public let rounds: Int
    public let memoryCost: Int
    public let saltSeparator: [UInt8]
    public let signerKey: [UInt8]
    public let salt: [UInt8]
    public let hash: [UInt8]

    /// The string stored for a Firebase user (`passwordHash` and `salt` from `auth:export`) under
    /// the project's hash configuration; nil when a part is not base64 or the costs are beyond
    /// `ForeignPasswordHash.Limits`.
    public static func encoded(
        passwordHash: String, salt: String, signerKey: String, saltSeparator: String, rounds: Int, memoryCost: Int
    ) -> String? {
        let encoded = "$firebase-scrypt$r=\(rounds),m=\(memoryCost)$\(saltSeparator)$\(signerKey)$\(salt)$\(passwordHash)"
        return ForeignPasswordHash(encoded)?.form == .firebaseScrypt ? encoded : nil
    }

    init?(_ fields: [String]) {
        guard fields.count == 7, fields[0].isEmpty, fields[1] == "firebase-scrypt", let costs = ForeignPasswordHash.costs(fields[2]),
            costs.count == 2, let rounds = costs["r"], let memoryCost = costs["m"], (1...32).contains(rounds),
            (1...ForeignPasswordHash.Limits.scryptLogN).contains(memoryCost), Scrypt(logN: memoryCost, blockSize: rounds).isCheckable,
            let separator = Data(base64Encoded: fields[3]), let signerKey = Data(base64Encoded: fields[4]), !signerKey.isEmpty,
            signerKey.count <= 256, let salt = Data(base64Encoded: fields[5]), !salt.isEmpty, salt.count <= 256,
            let hash = Data(base64Encoded: fields[6]), hash.count == signerKey.count
        else { return nil }
        (self.rounds, self.memoryCost) = (rounds, memoryCost)
        (saltSeparator, self.signerKey, self.salt, self.hash) = (Array(separator), Array(signerKey), Array(salt), Array(hash))
    }

    /// Whether `password` (its UTF-8 bytes) made `hash`, compared in constant time.
    func verify(_ password: [UInt8]) throws -> Bool {
        let derived = try Scrypt(logN: memoryCost, blockSize: rounds).derive(password, salt: salt + saltSeparator, length: 64)
        return ConstantTime.equals(try Self.ctr(key: Array(derived.prefix(32)), signerKey), hash)
    }

    /// AES-256-CTR of `plaintext` from a zero counter block.
    private static func ctr(key: [UInt8], _ plaintext: [UInt8]) throws -> [UInt8] {
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.openSSL("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        let counter = [UInt8](repeating: 0, count: 16)
        guard EVP_EncryptInit_ex(context, EVP_aes_256_ctr(), nil, key, counter) == 1 else {
            throw CryptoError.openSSL("EVP_EncryptInit_ex")
        }
        var output = [UInt8](repeating: 0, count: plaintext.count + 16)
        var written: Int32 = 0
        guard EVP_EncryptUpdate(context, &output, &written, plaintext, Int32(plaintext.count)) == 1 else {
            throw CryptoError.openSSL("EVP_EncryptUpdate")
        }
        return Array(output.prefix(Int(written)))
    }
}

extension ForeignPasswordHash {
    static func firebase(_ fields: [String]) -> (Form, Parameters)? {
        FirebaseScrypt(fields).map { (.firebaseScrypt, .firebase($0)) }
    }
}
