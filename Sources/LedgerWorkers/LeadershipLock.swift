import LedgerPostgres

/// What elects the one instance that runs a job: `SessionAdvisoryLock` in the service; tests
/// script one.
public protocol LeadershipLock: Sendable {
    /// Tries to take the lock, waiting for nothing; true when this instance holds it now.
    func tryAcquire() async throws -> Bool
    /// Whether this instance still holds it. False (or an error) means it may already be
    /// another's: the caller stops acting as the leader until `tryAcquire` says otherwise.
    func isHeld() async throws -> Bool
    /// Gives it up, so another instance may take it at once.
    func release() async
}

extension SessionAdvisoryLock: LeadershipLock {}
