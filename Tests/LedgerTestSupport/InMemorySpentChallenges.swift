import Foundation
import LedgerAccounts
import Synchronization

/// `SpentChallenges` in one process's memory, for tests without a database.
public final class InMemorySpentChallenges: SpentChallenges {
    private let spent = Mutex<Set<[UInt8]>>([])

    public init() {}

    public func spend(_ challengeHash: [UInt8], expiresAt: Date) async throws -> Bool {
        spent.withLock { $0.insert(challengeHash).inserted }
    }
}
