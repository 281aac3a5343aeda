/// The indexes, unique constraints and primary keys of some tables, dropped before a bulk
/// load into those tables and built again after it.
///
/// Building an index once over loaded rows costs a fraction of inserting each row into it,
/// above all for random keys such as token hashes. The primary keys of `keepingPrimaryKeysOf`
/// stay: the load's `ON CONFLICT` clauses name them. The definitions are read from the
/// catalog, so they are exactly what the migrations created. Run inside the load's
/// transaction: other sessions never see the tables without their indexes, and a failed load
/// rolls the drops back.
public struct DeferredIndexes: Sendable {
    /// Statements that rebuild what `drop` removed, in order.
    public let restoreStatements: [String]

    /// Drops the indexes and key constraints of `tables` (in the current schema).
    public static func drop(
        from tables: [String], keepingPrimaryKeysOf kept: [String] = [], on connection: PostgresConnection
    ) async throws -> DeferredIndexes {
        let rows = try await connection.query(
            """
            SELECT format('ALTER TABLE %I DROP CONSTRAINT %I', t.relname, c.conname),
                   format('ALTER TABLE %I ADD CONSTRAINT %I %s', t.relname, c.conname, pg_get_constraintdef(c.oid))
            FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
            WHERE t.relname = ANY($1::text[]) AND pg_table_is_visible(t.oid)
              AND (c.contype = 'u' OR (c.contype = 'p' AND t.relname <> ALL($2::text[])))
            UNION ALL
            SELECT format('DROP INDEX %I', i.relname), pg_get_indexdef(x.indexrelid)
            FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
            WHERE t.relname = ANY($1::text[]) AND pg_table_is_visible(t.oid) AND NOT x.indisprimary
              AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
            """,
            [.text("{" + tables.joined(separator: ",") + "}"), .text("{" + kept.joined(separator: ",") + "}")])
        var restore: [String] = []
        for row in rows.rows {
            guard let dropStatement = row.string(0), let createStatement = row.string(1) else { continue }
            try await connection.query(dropStatement)
            restore.append(createStatement)
        }
        return DeferredIndexes(restoreStatements: restore)
    }

    /// Builds the dropped indexes and constraints again; a duplicate in a unique column fails
    /// here with a unique violation.
    public func restore(on connection: PostgresConnection) async throws {
        for statement in restoreStatements {
            try await connection.query(statement)
        }
    }
}
