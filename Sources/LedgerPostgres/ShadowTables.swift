import Foundation

/// Copies of some tables, built in a schema of their own beside the live ones and swapped in
/// for them in one short transaction: how derived tables are rebuilt while the service runs.
///
/// The copies start without indexes (a bulk load is cheaper into bare tables, and an index
/// built once over loaded rows costs a fraction of inserting each row into it), but for the
/// primary keys of `keepingPrimaryKeysOf`, which the load's `ON CONFLICT` clauses name. The
/// definitions of the rest are read from the catalog, so they are exactly what the migrations
/// created, under the same names. Writes reach the copies through `writing`, which puts their
/// schema first on the search path: the writers' SQL stays the live tables' SQL.
///
/// Leftovers of a rebuild that died are dropped by the next `prepare`.
public struct ShadowTables: Sendable {
    /// The tables, by name in the live schema.
    public let tables: [String]
    /// The schema of the live tables (the connection's `current_schema()`).
    public let liveSchema: String
    /// Where the copies are built.
    public var shadowSchema: String { liveSchema + "_rebuild" }
    /// Where the replaced tables wait, between the swap and `dropRetired`.
    public var retiredSchema: String { liveSchema + "_retired" }
    /// `CREATE INDEX CONCURRENTLY` for the indexes that enforce nothing.
    let secondaryIndexes: [String]
    /// The unique indexes, each key's followed by the `ALTER TABLE` that makes it the
    /// primary key or unique constraint (all but the kept primary keys).
    let uniqueKeys: [String]

    /// The session advisory lock one rebuild at a time holds, so two never build the same copies.
    static let rebuildLockKey = "ledger.shadow-tables"

    /// Creates empty copies of `tables` in `shadowSchema`, with their columns, defaults,
    /// checks and grants, and reads the definitions of their indexes for later.
    public static func prepare(
        _ tables: [String], keepingPrimaryKeysOf kept: [String] = [], on connection: PostgresConnection
    ) async throws -> ShadowTables {
        let liveSchema = try await connection.query("SELECT current_schema()")[0].string(0) ?? "public"
        var shadow = ShadowTables(tables: tables, liveSchema: liveSchema, secondaryIndexes: [], uniqueKeys: [])
        try await shadow.refuseUnsafe(on: connection)
        try await shadow.discard(on: connection)
        try await shadow.createMarkedSchema(shadow.shadowSchema, on: connection)
        for table in tables {
            try await connection.query(
                """
                CREATE TABLE \(shadow.shadowTable(table)) (LIKE \(shadow.liveTable(table))
                    INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED INCLUDING IDENTITY INCLUDING STORAGE)
                """)
        }
        let tableList = PostgresParameter.textArray(tables)
        // Grants, so a role that may read the live tables may read their replacements.
        let grants = try await connection.query(
            """
            SELECT format('GRANT %s ON %I.%I TO %s', a.privilege_type, $2::text, t.relname,
                          CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END)
            FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace, aclexplode(t.relacl) a
            WHERE n.nspname = current_schema() AND t.relname = ANY($1::text[]) AND a.grantee <> t.relowner
            """,
            [tableList, .text(shadow.shadowSchema)])
        for row in grants.rows { if let grant = row.string(0) { try await connection.query(grant) } }
        // Each index as the live table's, built CONCURRENTLY: a plain build's transaction would
        // hold the event feed back for as long as it runs (the feed reads below the oldest
        // running transaction). A key is its unique index, then attached as the constraint.
        let definitions = try await connection.query(
            """
            WITH defined AS (
                SELECT c.contype = 'p' AND t.relname = ANY($2::text[]) AS kept, true AS is_unique,
                       c.conindid AS index_id,
                       format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s USING INDEX %I', $3::text, t.relname, c.conname,
                              CASE c.contype WHEN 'p' THEN 'PRIMARY KEY' ELSE 'UNIQUE' END, c.conname) AS attach,
                       format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s', $3::text, t.relname, c.conname,
                              pg_get_constraintdef(c.oid)) AS plain
                FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
                WHERE n.nspname = current_schema() AND t.relname = ANY($1::text[]) AND c.contype IN ('p', 'u')
                UNION ALL
                SELECT false, x.indisunique, x.indexrelid, NULL, NULL
                FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
                WHERE n.nspname = current_schema() AND t.relname = ANY($1::text[])
                  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
            )
            SELECT d.kept, d.is_unique, d.plain, d.attach,
                   regexp_replace(replace(pg_get_indexdef(d.index_id), format(' ON %I.%I ', n.nspname, t.relname),
                                          format(' ON %I.%I ', $3::text, t.relname)),
                                  '^CREATE (UNIQUE )?INDEX ', 'CREATE \\1INDEX CONCURRENTLY ')
            FROM defined d JOIN pg_index x ON x.indexrelid = d.index_id JOIN pg_class t ON t.oid = x.indrelid
                JOIN pg_namespace n ON n.oid = t.relnamespace
            ORDER BY 5
            """,
            [tableList, .textArray(kept), .text(shadow.shadowSchema)])
        var secondary: [String] = []
        var unique: [String] = []
        for row in definitions.rows {
            guard let build = row.string(4) else { continue }
            if try row.bool(0) == true, let plain = row.string(2) {
                try await connection.query(plain)
            } else if try row.bool(1) == true {
                unique.append(build)
                if let attach = row.string(3) { unique.append(attach) }
            } else {
                secondary.append(build)
            }
        }
        shadow = ShadowTables(tables: tables, liveSchema: liveSchema, secondaryIndexes: secondary, uniqueKeys: unique)
        return shadow
    }

    /// Builds the indexes that enforce nothing (a catch-up finds rows by them).
    public func buildSecondaryIndexes(on connection: PostgresConnection) async throws {
        for statement in secondaryIndexes { try await connection.query(statement) }
    }

    /// Builds the primary keys and unique constraints; a duplicate fails here with a unique
    /// violation.
    public func buildUniqueKeys(on connection: PostgresConnection) async throws {
        for statement in uniqueKeys { try await connection.query(statement) }
    }

    /// Gathers the copies' statistics, so queries are planned well from the swap on.
    public func analyze(on connection: PostgresConnection) async throws {
        try await connection.query("ANALYZE " + tables.map(shadowTable).joined(separator: ", "))
    }

    /// Runs `body` in a transaction whose unqualified table names find the copies first (the
    /// live schema's other tables after them).
    public func writing<T>(on connection: PostgresConnection, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await connection.transaction { connection in
            try await connection.query("SET LOCAL search_path TO \(quoted(shadowSchema)), \(quoted(liveSchema))")
            return try await body(connection)
        }
    }

    /// Why a swap did not happen.
    public enum SwapOutcome: Sendable, Equatable {
        /// The copies are the live tables now; the lock was held for `held`.
        case swapped(held: Duration)
        /// The live tables were not free within the lock's wait; nothing changed.
        case busy
        /// `finish` ran past its budget under the lock; rolled back, nothing changed.
        case tooSlow(held: Duration)
    }

    /// Thrown by a swap's `finish` that sees it cannot end within the budget: the swap rolls
    /// back (`tooSlow`) rather than hold the tables longer.
    public struct OutOfTime: Error {
        public init() {}
    }

    /// Locks the live tables (waiting at most `lockWait`; others' statements wait behind this
    /// one meanwhile), runs `finish` in the same transaction with the copies first on the search
    /// path, and swaps the copies in for the live tables: the live ones move to `retiredSchema`.
    ///
    /// A statement waiting for a live table when the swap commits finds the copy under the same
    /// name (PostgreSQL looks a name up again after waiting for its lock), so a waiting command
    /// writes into the new table. `finish` gets the instant its `budget` ends and should throw
    /// `OutOfTime` past it (the swap rolls back, `tooSlow`); the server bounds it too: a
    /// statement past `budget` is cancelled (`tooSlow` as well), and a pause between statements
    /// past `stallLimit` ends the session (this process stalled: the rebuild fails).
    public func swap(
        on connection: PostgresConnection, lockWait: Duration, budget: Duration, stallLimit: Duration,
        finish: (PostgresConnection, ContinuousClock.Instant) async throws -> Void
    ) async throws -> SwapOutcome {
        /// Leaves the transaction, rolled back, with the outcome.
        struct Abandoned: Error { let outcome: SwapOutcome }
        var locked = ContinuousClock.now
        do {
            try await connection.transaction { connection in
                connection.queue("SET LOCAL lock_timeout = \(Self.milliseconds(lockWait))")
                // The LOCK bound as a whole too, not only each table's wait.
                connection.queue("SET LOCAL statement_timeout = \(Self.milliseconds(lockWait))")
                do {
                    try await connection.query(
                        "LOCK TABLE " + tables.map(liveTable).joined(separator: ", ") + " IN ACCESS EXCLUSIVE MODE")
                } catch let error as PostgresError
                    where error.code == .lockTimeout || error.code == .queryCanceled || error.code == .deadlockDetected
                {
                    throw Abandoned(outcome: .busy)
                }
                locked = ContinuousClock.now
                connection.queue("SET LOCAL statement_timeout = \(Self.milliseconds(budget))")
                // A dead man's switch, should this process stall holding the locks (longer than
                // the budget, so `finish`'s own checks give up first).
                connection.queue("SET LOCAL idle_in_transaction_session_timeout = \(Self.milliseconds(max(stallLimit, budget)))")
                try await connection.query("SET LOCAL search_path TO \(quoted(shadowSchema)), \(quoted(liveSchema))")
                do {
                    try await finish(connection, locked + budget)
                } catch is OutOfTime {
                    throw Abandoned(outcome: .tooSlow(held: ContinuousClock.now - locked))
                } catch let error as PostgresError where error.code == .queryCanceled {
                    throw Abandoned(outcome: .tooSlow(held: ContinuousClock.now - locked))
                }
                if ContinuousClock.now > locked + budget { throw Abandoned(outcome: .tooSlow(held: ContinuousClock.now - locked)) }
                try await connection.query("CREATE SCHEMA \(quoted(retiredSchema))")
                connection.queue("COMMENT ON SCHEMA \(quoted(retiredSchema)) IS '\(Self.marker)'")
                for table in tables {
                    connection.queue("ALTER TABLE \(liveTable(table)) SET SCHEMA \(quoted(retiredSchema))")
                    connection.queue("ALTER TABLE \(shadowTable(table)) SET SCHEMA \(quoted(liveSchema))")
                }
                try await connection.query("DROP SCHEMA \(quoted(shadowSchema))")
                // No timeout on the COMMIT: a cancelled wait for the synchronous standbys would
                // leave the swap committed here only, reported done, and lost to a failover
                // (docs/operations.md "High availability on Patroni").
                connection.queue("SET LOCAL statement_timeout = 0")
            }
            return .swapped(held: ContinuousClock.now - locked)
        } catch let abandoned as Abandoned {
            return abandoned.outcome
        }
    }

    /// Drops the tables a swap retired. Nothing uses them: statements that waited for them
    /// found the new tables.
    public func dropRetired(on connection: PostgresConnection) async throws {
        try await drop([retiredSchema], on: connection)
    }

    /// Drops the copies and anything retired (a rebuild that failed or died).
    public func discard(on connection: PostgresConnection) async throws {
        try await drop([shadowSchema, retiredSchema], on: connection)
    }

    /// Drops schemas that may not exist, without the server's notice saying so.
    private func drop(_ schemas: [String], on connection: PostgresConnection) async throws {
        try await connection.transaction { connection in
            connection.queue("SET LOCAL client_min_messages = warning")
            for schema in schemas { try await connection.query("DROP SCHEMA IF EXISTS \(quoted(schema)) CASCADE") }
        }
    }

    /// What the schemas this type makes say of themselves (`COMMENT ON SCHEMA`): only a schema
    /// saying it is ever dropped.
    static let marker = "ledger: projections rebuild (dropped when done)"

    private func createMarkedSchema(_ schema: String, on connection: PostgresConnection) async throws {
        try await connection.query("CREATE SCHEMA \(quoted(schema))")
        try await connection.query("COMMENT ON SCHEMA \(quoted(schema)) IS '\(Self.marker)'")
    }

    /// Refuses what would go wrong: a schema name PostgreSQL would cut (`<schema>_rebuild` cut
    /// to 63 bytes could name the live schema, which `discard` drops), a schema of that name
    /// this type did not make, tables the connection's role does not own (the copies would be
    /// owned by it, and the service's role could no longer write them), and objects that hang
    /// on the live tables and would not follow the swap (views, foreign keys, triggers, row
    /// security policies, publications).
    private func refuseUnsafe(on connection: PostgresConnection) async throws {
        guard retiredSchema.utf8.count <= 63 && shadowSchema.utf8.count <= 63 else {
            throw ShadowTablesError(.nameTooLong, "the schema name \(liveSchema) is too long to build tables beside it")
        }
        let foreign = try await connection.query(
            """
            SELECT string_agg(nspname, ', ') FROM pg_namespace
            WHERE nspname = ANY($1::text[]) AND obj_description(oid, 'pg_namespace') IS DISTINCT FROM $2
            """,
            [.textArray([shadowSchema, retiredSchema]), .text(Self.marker)])
        if let names = foreign[0].string(0) {
            throw ShadowTablesError(.foreignSchema, "the schema \(names) exists and was not made by a rebuild: rename it first")
        }
        let tableList = PostgresParameter.textArray(tables)
        let checks = try await connection.query(
            """
            WITH live AS (
                SELECT t.oid, t.relname, t.relowner, t.relrowsecurity FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace
                WHERE n.nspname = current_schema() AND t.relname = ANY($1::text[]) AND t.relkind = 'r')
            SELECT (SELECT string_agg(relname, ', ') FROM live WHERE relowner <> (SELECT oid FROM pg_roles WHERE rolname = current_user)),
                   (SELECT string_agg(DISTINCT live.relname, ', ') FROM live WHERE relrowsecurity
                        OR EXISTS (SELECT 1 FROM pg_depend d WHERE d.refobjid = live.oid AND d.classid = 'pg_rewrite'::regclass)
                        OR EXISTS (SELECT 1 FROM pg_constraint c WHERE c.contype = 'f' AND live.oid IN (c.conrelid, c.confrelid))
                        OR EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = live.oid AND NOT g.tgisinternal)
                        OR EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = live.oid)
                        OR EXISTS (SELECT 1 FROM pg_publication_rel r WHERE r.prrelid = live.oid)),
                   (SELECT pg_get_userbyid(min(relowner)) FROM live)
            """,
            [tableList])
        if let notOwned = checks[0].string(0) {
            throw ShadowTablesError(
                .notOwner,
                "run the rebuild as the role that owns the tables (\(checks[0].string(2) ?? "their owner")); not owned: \(notOwned)")
        }
        if let dependents = checks[0].string(1) {
            throw ShadowTablesError(
                .dependents,
                "views, foreign keys, triggers, row security or publications hang on \(dependents) and would not follow a swap")
        }
    }

    /// Runs `body` holding the session lock that one rebuild at a time holds, and the advisory
    /// locks `alsoHolding` (a migration's, so no migration changes the tables meanwhile);
    /// throws `ShadowTablesError` (`alreadyRunning`), waiting for nothing, when another session
    /// holds any of them.
    public static func exclusively<T>(
        on connection: PostgresConnection, alsoHolding otherKeys: [Int64] = [], _ body: () async throws -> T
    ) async throws -> T {
        let own = try await connection.query("SELECT hashtextextended($1, 0)", [.text(rebuildLockKey)])
        let keys = [try own[0].int(0) ?? 0] + otherKeys
        var held: [Int64] = []
        func release() async {
            for key in held.reversed() where connection.isUsable {
                _ = try? await connection.query("SELECT pg_advisory_unlock($1)", [.int(key)])
            }
        }
        do {
            for key in keys {
                guard try await connection.query("SELECT pg_try_advisory_lock($1)", [.int(key)])[0].bool(0) == true else {
                    throw ShadowTablesError(
                        .alreadyRunning,
                        "another projections rebuild or a schema migration is running against this database; try again when it ends")
                }
                held.append(key)
            }
            let value = try await body()
            await release()
            return value
        } catch {
            await release()
            throw error
        }
    }

    /// A live table's name, qualified (for SQL that runs whatever the search path).
    public func liveTable(_ table: String) -> String { quoted(liveSchema) + "." + quoted(table) }
    /// A copy's name, qualified.
    public func shadowTable(_ table: String) -> String { quoted(shadowSchema) + "." + quoted(table) }

    static func milliseconds(_ duration: Duration) -> Int64 {
        max(1, duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}

/// An identifier quoted for SQL.
private func quoted(_ identifier: String) -> String {
    "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

/// Why tables could not be built beside the live ones.
public struct ShadowTablesError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable {
        let name: String
        /// Another rebuild, or a migration, holds the database.
        public static let alreadyRunning = Code(name: "already_running")
        /// The connection's role does not own the live tables.
        public static let notOwner = Code(name: "not_owner")
        /// The live schema's name leaves no room for the copies' schema names.
        public static let nameTooLong = Code(name: "name_too_long")
        /// A schema with a copies' name exists that a rebuild did not make.
        public static let foreignSchema = Code(name: "foreign_schema")
        /// Objects hang on the live tables that would not follow a swap.
        public static let dependents = Code(name: "dependents")
    }

    public let code: Code
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
