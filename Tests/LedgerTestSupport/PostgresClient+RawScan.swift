import LedgerPostgres

extension PostgresClient {
    /// How many rows of any table hold `text` in the clear: in a text column, or as its bytes in
    /// a `bytea` one (which a row's text shows in hex). The tests' proof that a secret was
    /// stored only sealed or hashed.
    public func rowsHolding(_ text: String) async throws -> Int {
        let tables = try await query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        var found = 0
        for table in tables.rows.compactMap({ $0.string(0) }) {
            let rows = try await query(
                "SELECT count(*) FROM \(table) AS t WHERE strpos(t::text, $1) > 0 OR strpos(t::text, encode(convert_to($1, 'UTF8'), 'hex')) > 0",
                [.text(text)])
            found += Int(try rows[0].int(0) ?? 0)
        }
        return found
    }
}
