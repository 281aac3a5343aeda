import Foundation

/// A session-level advisory lock (`pg_try_advisory_lock`) held on a connection of its own, for
/// electing one process among many: the one whose session holds the lock leads.
///
/// The connection is opened outside the pool of the `PostgresClient` it comes from (it borrows
/// only the client's URL and threads) and never handed to anyone else: a pooled connection may
/// be closed and transparently replaced, and the lock would silently go with it, or be given
/// back to the pool still held. PostgreSQL frees the lock when the session ends, so a process
/// killed with `kill -9` frees it at once (its socket closes), and one cut off by the network
/// frees it once the server's TCP keepalives (`keepalive`, set per session) give up on it.
public actor SessionAdvisoryLock {
    let client: PostgresClient
    /// The lock's key among PostgreSQL's advisory locks (one space shared with every other
    /// advisory lock of the database).
    public nonisolated let key: Int64
    /// How long the server waits before it probes an idle session for a peer that is gone, and
    /// between probes (three are sent); nil leaves the server's settings.
    let keepalive: (idle: Int, interval: Int)?
    private var connection: PostgresConnection?

    public init(client: PostgresClient, key: Int64, keepaliveSeconds: (idle: Int, interval: Int)? = nil) {
        self.client = client
        self.key = key
        self.keepalive = keepaliveSeconds
    }

    /// Tries to take the lock, waiting for nothing: true when this session holds it now. Opens
    /// a new connection first when there is none or the last one broke.
    public func tryAcquire() async throws -> Bool {
        let connection = try await usableConnection()
        do {
            return try await connection.query("SELECT pg_try_advisory_lock($1)", [.int(key)])[0].bool(0) == true
        } catch {
            drop()
            throw error
        }
    }

    /// Whether this session still holds the lock, asked of the server (so it also proves the
    /// connection alive). A connection that fails the question is dropped, lock and all: the
    /// caller must take it again before it counts on it.
    public func isHeld() async throws -> Bool {
        guard let connection, connection.isUsable else {
            drop()
            return false
        }
        do {
            // A bigint key is held as (classid, objid) = (high, low 32 bits), objsubid 1.
            let rows = try await connection.query(
                """
                SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
                    AND objsubid = 1 AND classid::bigint = (($1::bigint >> 32) & 4294967295) AND objid::bigint = ($1::bigint & 4294967295))
                """,
                [.int(key)])
            let held = try rows[0].bool(0) == true
            if !held { drop() }
            return held
        } catch {
            drop()
            throw error
        }
    }

    /// Gives the lock up: unlocks it (so another may take it as soon as this returns), then
    /// closes its connection (PostgreSQL frees it with the session anyway, a moment later, when
    /// the unlock could not be said).
    public func release() async {
        if let connection, connection.isUsable {
            _ = try? await connection.query("SELECT pg_advisory_unlock($1)", [.int(key)])
        }
        drop()
    }

    private func drop() {
        connection?.close()
        connection = nil
    }

    private func usableConnection() async throws -> PostgresConnection {
        if let connection, connection.isUsable { return connection }
        drop()
        let connection = try await PostgresConnection.connect(
            url: client.configuration.url, executor: client.executor, readiness: client.readiness)
        // Named apart in pg_stat_activity, so an operator can tell the lock's session from the pool's.
        var setup = "SET application_name = 'ledger-lock'"
        if let keepalive {
            setup += "; SET tcp_keepalives_idle = \(keepalive.idle); SET tcp_keepalives_interval = \(keepalive.interval)"
            setup += "; SET tcp_keepalives_count = 3"
        }
        try await connection.query(setup)
        self.connection = connection
        return connection
    }
}
