import Foundation
import LedgerIdentity

/// Holds reported by backends, and the deletion preflight that reads them.
extension AccountService {
    /// Records a hold (idempotent per `ref`: the same content again appends nothing). The
    /// hold belongs to `hold.keyID`: another key's hold with the same `ref` is `404`.
    public func placeHold(_ accountID: UUID, _ hold: Hold) async throws {
        _ = try await repository.execute(accountID) { _ in .placeHold(hold) }
    }

    /// Releases a hold `keyID` placed; an unknown `ref` changes nothing, another key's is `404`
    /// unless `administrator` (an `admin` key clearing a revoked key's holds).
    public func releaseHold(_ accountID: UUID, ref: String, keyID: String?, administrator: Bool = false) async throws {
        _ = try await repository.execute(accountID) { _ in .releaseHold(ref: ref, keyID: keyID, administrator: administrator) }
    }

    /// Appends `hold.lapsed` for the account's session and booking holds that have started;
    /// returns how many lapsed.
    @discardableResult
    public func lapseHolds(_ accountID: UUID) async throws -> Int {
        try await repository.execute(accountID) { _ in .lapseHolds }.1.count
    }

    /// The blockers of a deletion, in the product's priority order.
    public func deletionPreflight(_ accountID: UUID) async throws -> [DeletionBlocker] {
        try await repository.load(accountID).deletionBlockers(at: clock.now())
    }
}
