import Foundation
import LedgerAccounts
import LedgerCrypto
import Testing

@Suite("Password hashing pool")
struct PasswordHasherTests {
    @Test("beyond its running and waiting slots the pool refuses at once instead of queueing")
    func boundedPool() async throws {
        let hasher = try PasswordHasher(parameters: Scrypt(logN: 12), maximumConcurrent: 1, maximumQueued: 1)
        let outcomes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    do {
                        _ = try await hasher.hash("violet-harbor-91")
                        return "hashed"
                    } catch PasswordHasherError.overloaded {
                        return "overloaded"
                    } catch {
                        return "error"
                    }
                }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(outcomes.contains("hashed"))
        #expect(outcomes.contains("overloaded"))
        #expect(!outcomes.contains("error"))
        // Once the flood is over, the pool serves again.
        #expect(try await hasher.verify("violet-harbor-91", against: try hasher.hash("violet-harbor-91")))
    }

    @Test("an unknown account is checked against a decoy and never matches")
    func decoy() async throws {
        let hasher = try PasswordHasher(parameters: Scrypt(logN: 4))
        #expect(try await !hasher.verify("anything", against: nil))
    }

    @Test("hashes are rehashed only upward: a weaker one is, a stronger one stays")
    func rehashUpward() throws {
        let hasher = try PasswordHasher(parameters: Scrypt(logN: 5))
        #expect(hasher.needsRehash(try Scrypt(logN: 4).hash("x")))
        #expect(!hasher.needsRehash(try Scrypt(logN: 5).hash("x")))
        #expect(!hasher.needsRehash(try Scrypt(logN: 6).hash("x")))
        #expect(hasher.needsRehash("not a hash"))
    }
}
