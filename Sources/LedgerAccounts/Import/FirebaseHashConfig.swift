import Foundation
import LedgerCrypto

/// A Firebase project's password hash parameters, as its console shows them (Authentication →
/// Users → ⋮ → "Password hash parameters"): JSON `{algorithm, base64_signer_key,
/// base64_salt_separator, rounds, mem_cost}`, or the console's own `hash_config { … }` text.
public struct FirebaseHashConfig: Sendable, Equatable, Decodable {
    public var algorithm: String
    public var signerKey: String
    public var saltSeparator: String
    public var rounds: Int
    public var memoryCost: Int

    enum CodingKeys: String, CodingKey {
        case algorithm, signerKey = "base64_signer_key", saltSeparator = "base64_salt_separator", rounds, memoryCost = "mem_cost"
    }

    public init(signerKey: String, saltSeparator: String, rounds: Int, memoryCost: Int) {
        self.algorithm = "SCRYPT"
        self.signerKey = signerKey
        self.saltSeparator = saltSeparator
        self.rounds = rounds
        self.memoryCost = memoryCost
    }

    /// Reads either form; nil when neither reads, or the algorithm is not `SCRYPT`, or a key
    /// is not base64.
    public init?(_ data: Data) {
        if let decoded = try? JSONDecoder().decode(Self.self, from: data) {
            self = decoded
        } else if let text = String(data: data, encoding: .utf8) {
            // hash_config {\n  algorithm: SCRYPT,\n  base64_signer_key: …,\n … }
            var fields: [String: String] = [:]
            for line in text.split(whereSeparator: \.isNewline) {
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2 else { continue }
                let value = parts[1].trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: ",\"")))
                fields[parts[0].trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\"")))] = value
            }
            guard let algorithm = fields["algorithm"], let signerKey = fields["base64_signer_key"],
                let saltSeparator = fields["base64_salt_separator"], let rounds = fields["rounds"].flatMap({ Int($0) }),
                let memoryCost = fields["mem_cost"].flatMap({ Int($0) })
            else { return nil }
            self.init(signerKey: signerKey, saltSeparator: saltSeparator, rounds: rounds, memoryCost: memoryCost)
            self.algorithm = algorithm
        } else {
            return nil
        }
        guard algorithm.uppercased() == "SCRYPT", Data(base64Encoded: signerKey) != nil, Data(base64Encoded: saltSeparator) != nil
        else { return nil }
    }

    /// The string kept for a user's `passwordHash` and `salt`; nil when they or the parameters
    /// are not a hash this service can check.
    func encoded(passwordHash: String, salt: String) -> String? {
        FirebaseScrypt.encoded(
            passwordHash: passwordHash, salt: salt, signerKey: signerKey, saltSeparator: saltSeparator, rounds: rounds,
            memoryCost: memoryCost)
    }
}
