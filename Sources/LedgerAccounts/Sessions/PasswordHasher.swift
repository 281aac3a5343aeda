import Foundation
import LedgerCore
import LedgerCrypto
import NIOPosix

/// scrypt on a bounded pool: at most `maximumConcurrent` hashes run at once (each takes
/// 128·r·N bytes, 128 MiB at the default cost) and at most `maximumQueued` wait, sign-ins
/// served first and new passwords on at most half the queue (`HashingQueue`); beyond that
/// callers get `overloaded` at once, so a flood is answered instead of exhausting memory.
public final class PasswordHasher: Sendable {
    public let parameters: Scrypt
    /// scrypt blocks: it runs on these threads, never on an event loop or the concurrency pool.
    private let threads: NIOThreadPool
    private let queue: HashingQueue

    /// The hash an unknown email is checked against, so that it costs what a wrong password costs.
    private let decoy: String

    public init(parameters: Scrypt, maximumConcurrent: Int = 2, maximumQueued: Int = 64) throws {
        self.parameters = parameters
        self.threads = NIOThreadPool(numberOfThreads: max(1, maximumConcurrent))
        threads.start()
        self.queue = HashingQueue(threads: maximumConcurrent, queueLimit: maximumQueued, newPasswordLimit: maximumQueued / 2)
        self.decoy = try parameters.hash(UUID().uuidString)
    }

    /// A new password's hash (sign-up, reset, change, a rehash): behind every waiting sign-in.
    public func hash(_ password: String) async throws -> String {
        try await gated(.newPassword) { [parameters] in try parameters.hash(password) }
    }

    /// Lets the hashes under way finish, then stops the threads (the service's shutdown).
    public func shutdown() async {
        try? await threads.shutdownGracefully()
    }

    /// Whether a new password's hash would be queued now; when not, a sign-up is refused
    /// (`overloaded`) before it counts, looks up or writes anything.
    public var acceptsNewPasswords: Bool { queue.hasRoom(for: .newPassword) }

    /// True when `password` matches `encoded`; with no stored hash, spends the same time on
    /// the decoy and answers false. A sign-in or re-auth: ahead of new passwords. An imported
    /// account's hash in another system's form is checked by that form's library
    /// (`ForeignPasswordHash`), on the same threads.
    public func verify(_ password: String, against encoded: String?) async throws -> Bool {
        let target = encoded ?? decoy
        let matches = try await gated(.signIn) {
            if Scrypt.parameters(of: target) != nil { return try Scrypt.verify(password, against: target) }
            // A hash its library will not check matches nothing ("Forgot password" replaces it),
            // rather than failing every sign-in with a 500.
            return (try? ForeignPasswordHash(target)?.verify(password)) ?? false
        }
        return encoded != nil && matches
    }

    /// Whether a stored hash is weaker than today's parameters (rehash on sign-in). Only
    /// upward: a hash made at a higher cost stays, so lowering `LEDGER_SCRYPT_LOG_N` by mistake
    /// (or for a test) never weakens the hashes of everyone who signs in meanwhile.
    public func needsRehash(_ encoded: String) -> Bool {
        guard let stored = Scrypt.parameters(of: encoded) else { return true }
        return stored.logN < parameters.logN || stored.blockSize < parameters.blockSize
            || stored.parallelism < parameters.parallelism
    }

    private func gated<T: Sendable>(_ priority: HashingQueue.Priority, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await queue.enter(priority)
        defer { queue.leave() }
        return try await threads.runIfActive(body)
    }
}

/// The hashing pool is full.
public enum PasswordHasherError: Error, Sendable {
    case overloaded
}

/// The hashing threads are a member of the service group that drains them after their users stop.
extension PasswordHasher: DrainingService {}
