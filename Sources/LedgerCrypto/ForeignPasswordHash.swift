import CArgon2
import CLibXCrypt
import COpenSSL
import Foundation

/// A password hash another system made (an imported account's), kept as it came and checked at
/// the next password sign-in, each form by the library made for it: bcrypt (`$2a$`, `$2b$`,
/// `$2y$`) by libxcrypt's `crypt_rn`, Argon2 (`$argon2id$`, `$argon2i$`) by the reference
/// libargon2, PBKDF2-SHA256 and -SHA1 (Django's `pbkdf2_sha256$…` and passlib's `$pbkdf2-sha256$…`
/// forms), scrypt (`$scrypt$ln=…` with passlib's salt and hash encoding) and Firebase's modified
/// scrypt (`ForeignPasswordHash+Firebase.swift`) by OpenSSL.
///
/// A hostile import must not make one sign-in cost minutes: costs beyond `Limits` are refused
/// when the hash is read, not when it is checked.
public struct ForeignPasswordHash: Sendable, Hashable {
    /// The hash families this service can check.
    public enum Form: String, Sendable, Hashable, CaseIterable {
        case bcrypt, argon2id, argon2i, scrypt
        case firebaseScrypt = "firebase_scrypt"
        case pbkdf2SHA256 = "pbkdf2_sha256"
        case pbkdf2SHA1 = "pbkdf2_sha1"
    }

    /// The largest costs accepted: above the defaults of every system these come from, below a
    /// cost that would let one imported row hold a sign-in thread for long.
    public enum Limits {
        public static let bcryptCost = 15
        public static let argon2MemoryKiB = 262_144
        public static let argon2Passes = 16
        public static let argon2Lanes = 4
        /// Memory times passes (KiB): 64 MiB at 16 passes, 256 MiB at 4.
        public static let argon2Work = 1_048_576
        public static let pbkdf2Iterations = 5_000_000
        public static let scryptLogN = 20
        /// Memory of one block pass, and of all `p` of them (scrypt's work grows with both).
        public static let scryptMemoryBytes: UInt64 = 256 << 20
    }

    public let form: Form
    /// The hash as it came.
    public let encoded: String
    private let parameters: Parameters

    enum Parameters: Sendable, Hashable {
        case crypt
        case argon2
        case pbkdf2(sha256: Bool, iterations: Int, salt: [UInt8], hash: [UInt8])
        case scrypt(Scrypt, salt: [UInt8], hash: [UInt8])
        case firebase(FirebaseScrypt)
    }

    /// Reads `encoded`; nil for a form this service does not know, a malformed one, or costs
    /// beyond `Limits`.
    public init?(_ encoded: String) {
        guard !encoded.utf8.contains(0), encoded.utf8.count <= 1024 else { return nil }
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        self.encoded = encoded
        if ["2a", "2b", "2y"].contains(fields.count == 4 ? fields[1] : ""), let cost = Int(fields[2]),
            (4...Limits.bcryptCost).contains(cost), fields[3].utf8.count == 53
        {
            (form, parameters) = (.bcrypt, .crypt)
        } else if let argon2 = Self.argon2(fields) {
            (form, parameters) = (argon2, .argon2)
        } else if let (form, parameters) = Self.pbkdf2(fields) ?? Self.scrypt(fields) ?? Self.firebase(fields) {
            (self.form, self.parameters) = (form, parameters)
        } else {
            return nil
        }
    }

    /// Whether `password` is the one hashed, compared in constant time. Blocking (it costs what
    /// the hash's parameters say): run it on the hashing threads, never on an event loop.
    public func verify(_ password: String) throws -> Bool {
        let bytes = Array(password.utf8)
        switch parameters {
        case .crypt:
            // C strings end at a NUL, which would shorten the password checked.
            guard !bytes.contains(0) else { return false }
            return try Self.crypt(password, setting: encoded).map { ConstantTime.equals(Array($0.utf8), Array(encoded.utf8)) } ?? false
        case .argon2:
            let result = bytes.withUnsafeBytes { raw in
                argon2_verify(encoded, raw.baseAddress, raw.count, form == .argon2id ? Argon2_id : Argon2_i)
            }
            if result == ARGON2_OK.rawValue { return true }
            if result == ARGON2_VERIFY_MISMATCH.rawValue { return false }
            throw CryptoError(.openSSLFailure, "argon2 could not check the hash: \(String(cString: argon2_error_message(result)))")
        case .pbkdf2(let sha256, let iterations, let salt, let hash):
            var derived = [UInt8](repeating: 0, count: hash.count)
            let done = PKCS5_PBKDF2_HMAC(
                bytes, Int32(bytes.count), salt, Int32(salt.count), Int32(iterations), sha256 ? EVP_sha256() : EVP_sha1(),
                Int32(hash.count), &derived)
            guard done == 1 else { throw CryptoError(.openSSLFailure, "PBKDF2 failed") }
            return ConstantTime.equals(derived, hash)
        case .scrypt(let scrypt, let salt, let hash):
            return ConstantTime.equals(try scrypt.derive(bytes, salt: salt, length: hash.count), hash)
        case .firebase(let firebase):
            return try firebase.verify(bytes)
        }
    }

    /// libxcrypt's hash of `password` with `setting`'s algorithm, cost and salt; nil when it refuses.
    private static func crypt(_ password: String, setting: String) throws -> String? {
        let size = MemoryLayout<crypt_data>.size
        let data = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<crypt_data>.alignment)
        defer {
            data.initializeMemory(as: UInt8.self, repeating: 0, count: size)
            data.deallocate()
        }
        data.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        guard let output = crypt_rn(password, setting, data, Int32(size)) else { return nil }
        let text = String(cString: output)
        // A failure is "*0" or "*1", never a hash.
        return text.hasPrefix("*") ? nil : text
    }

    /// `$argon2id$v=19$m=…,t=…,p=…$salt$hash` within the limits.
    private static func argon2(_ fields: [String]) -> Form? {
        guard fields.count == 6, let form = ["argon2id": Form.argon2id, "argon2i": .argon2i][fields[1]], fields[2] == "v=19"
        else { return nil }
        // Exactly as libargon2 writes it (the order it reads), with what it accepts: at least 8 KiB
        // a lane, a salt of 8 bytes or more, a hash of 4 or more; so what is imported also checks.
        guard let costs = costs(fields[3]), costs.count == 3, let memory = costs["m"], let passes = costs["t"], let lanes = costs["p"],
            fields[3] == "m=\(memory),t=\(passes),p=\(lanes)", (8 * lanes...Limits.argon2MemoryKiB).contains(memory),
            (1...Limits.argon2Passes).contains(passes), (1...Limits.argon2Lanes).contains(lanes), memory * passes <= Limits.argon2Work,
            let salt = adaptedBase64(fields[4]), salt.count >= 8, let hash = adaptedBase64(fields[5]), hash.count >= 4
        else { return nil }
        return form
    }

    /// Django's `pbkdf2_sha256$iterations$salt$base64` (the salt is its text), passlib's
    /// `$pbkdf2-sha256$iterations$ab64 salt$ab64 hash` (`$pbkdf2$` for SHA-1), or the PHC form
    /// `$pbkdf2-sha256$i=iterations,l=32$salt$hash` in unpadded base64.
    private static func pbkdf2(_ fields: [String]) -> (Form, Parameters)? {
        let (name, iterationsText, salt, hash): (String, String, [UInt8]?, [UInt8]?)
        if fields.count == 4, ["pbkdf2_sha256", "pbkdf2_sha1"].contains(fields[0]) {
            (name, iterationsText, salt, hash) = (
                fields[0], fields[1], Array(fields[2].utf8), Data(base64Encoded: fields[3]).map(Array.init)
            )
        } else if fields.count == 5, fields[0].isEmpty, ["pbkdf2-sha256", "pbkdf2-sha1", "pbkdf2"].contains(fields[1]) {
            let form = fields[1] == "pbkdf2-sha256" ? "pbkdf2_sha256" : "pbkdf2_sha1"
            // The PHC form names its costs (`i=25000,l=32`, as Auth0 exports it); passlib's is the count alone.
            let phc = fields[2].hasPrefix("i=") ? costs(fields[2]) : nil
            if fields[2].hasPrefix("i="), phc?["i"] == nil || phc?.keys.contains(where: { !["i", "l"].contains($0) }) == true {
                return nil
            }
            let decodedHash = adaptedBase64(fields[4])
            if let length = phc?["l"], decodedHash?.count != length { return nil }
            (name, iterationsText, salt, hash) = (form, phc?["i"].map(String.init) ?? fields[2], adaptedBase64(fields[3]), decodedHash)
        } else {
            return nil
        }
        // Each block of output costs the iterations again: SHA-1's 20 bytes make a 64-byte hash 4 runs.
        guard let form = Form(rawValue: name), let iterations = Int(iterationsText), iterations >= 1, let salt, let hash, !salt.isEmpty,
            (16...64).contains(hash.count),
            iterations * ((hash.count + (form == .pbkdf2SHA256 ? 31 : 19)) / (form == .pbkdf2SHA256 ? 32 : 20)) <= Limits.pbkdf2Iterations
        else { return nil }
        return (form, .pbkdf2(sha256: form == .pbkdf2SHA256, iterations: iterations, salt: salt, hash: hash))
    }

    /// passlib's `$scrypt$ln=…,r=…,p=…$ab64 salt$ab64 hash`.
    private static func scrypt(_ fields: [String]) -> (Form, Parameters)? {
        guard fields.count == 5, fields[0].isEmpty, fields[1] == "scrypt", let costs = costs(fields[2]) else { return nil }
        guard let logN = costs["ln"], let blockSize = costs["r"], let parallelism = costs["p"], (1...Limits.scryptLogN).contains(logN),
            (1...32).contains(blockSize), (1...16).contains(parallelism), let salt = adaptedBase64(fields[3]),
            let hash = adaptedBase64(fields[4]), !salt.isEmpty, (16...64).contains(hash.count)
        else { return nil }
        let scrypt = Scrypt(logN: logN, blockSize: blockSize, parallelism: parallelism)
        guard scrypt.isCheckable else { return nil }
        return (.scrypt, .scrypt(scrypt, salt: salt, hash: hash))
    }

    /// `m=1024,t=2,p=2` as numbers by name; nil when a pair is not `name=integer` or a name repeats.
    static func costs(_ text: String) -> [String: Int]? {
        var costs: [String: Int] = [:]
        for pair in text.split(separator: ",") {
            let parts = pair.split(separator: "=")
            guard parts.count == 2, let value = Int(parts[1]), costs.updateValue(value, forKey: String(parts[0])) == nil else { return nil }
        }
        return costs
    }

    /// passlib's "adapted base64": the standard alphabet with `.` for `+`, no padding. The
    /// URL-safe alphabet (`-`, `_`) is read too: this service's own `Scrypt` strings use it, so a
    /// hash exported from another Account Ledger comes in through here.
    static func adaptedBase64(_ text: String) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: ".", with: "+").replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        let remainder = standard.utf8.count % 4
        guard remainder != 1 else { return nil }
        if remainder > 0 { standard += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: standard).map(Array.init)
    }
}

extension Scrypt {
    /// Within `ForeignPasswordHash.Limits` (memory, and memory times `p`, which is the work),
    /// and a cost OpenSSL computes (RFC 7914: N < 2^(16·r)).
    var isCheckable: Bool {
        (1...4).contains(parallelism) && memoryBytes * UInt64(parallelism) <= ForeignPasswordHash.Limits.scryptMemoryBytes
            && logN < 16 * blockSize
    }
}
