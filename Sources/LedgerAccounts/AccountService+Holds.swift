import Foundation
import LedgerIdentity

/// Holds reported by backends, and the deletion preflight that reads them.
extension AccountService {
    /// Records a hold (idempotent per `ref`: the same content again appends nothing).
    public func placeHold(_ accountID: UUID, _ hold: Hold) async throws {
        _ = try await repository.execute(accountID) { _ in .placeHold(hold) }
    }

    /// Releases a hold; an unknown `ref` changes nothing.
    public func releaseHold(_ accountID: UUID, ref: String) async throws {
        _ = try await repository.execute(accountID) { _ in .releaseHold(ref: ref) }
    }

    /// The blockers of a deletion, in the seeds' priority order.
    public func deletionPreflight(_ accountID: UUID) async throws -> [DeletionBlocker] {
        try await repository.load(accountID).deletionBlockers
    }
}
