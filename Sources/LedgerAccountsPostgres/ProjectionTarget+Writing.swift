import LedgerPostgres

extension ProjectionTarget {
    /// Runs one of a projector's statements. A command's rows (`live`) are queued on the
    /// connection and go out with its transaction's next statement, usually the `COMMIT`:
    /// nothing in the command reads them back. A rebuild's run at once. A failure reads the
    /// same either way, through `translate`.
    func write(
        _ sql: String, _ parameters: [PostgresParameter], on connection: PostgresConnection,
        translate: (@Sendable (PostgresError) -> any Error)? = nil
    ) async throws {
        switch self {
        case .live:
            connection.queue(sql, parameters, translate: translate)
        case .emptiedTables:
            do {
                try await connection.query(sql, parameters)
            } catch let error as PostgresError {
                throw translate?(error) ?? error
            }
        }
    }
}
