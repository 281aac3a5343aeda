import CLibPQ
import Foundation

/// One libpq connection; one task uses it at a time.
///
/// No libpq call here waits on the network from a task's thread: a statement that can be sent
/// without blocking (small parameters, already prepared) is sent from the task, and its result
/// is awaited through `SocketReadiness`; connecting, preparing and bulk parameters run on the
/// `BlockingExecutor`'s threads.
public final class PostgresConnection: @unchecked Sendable {
    private var handle: OpaquePointer?
    /// Statements prepared on this connection, by text, then by parameter types.
    private var preparedStatements: [String: [(types: [Oid], name: String)]] = [:]
    private var preparedStatementCount = 0
    /// Statements that completed since the pool last handed this connection out.
    var statementsSinceCheckout = 0
    /// Whether the first statement sent since the pool last handed this connection out opened a
    /// transaction (nil: none sent yet). Only then is a connection lost before any result known
    /// to have committed nothing (`PostgresClient.withConnection` replays only such a checkout).
    var checkoutOpenedTransaction: Bool?
    /// Statements waiting to go out with the next one awaited (`queue`).
    private var queued: [QueuedStatement] = []
    /// Pipelines sent on this connection (for tests: queued statements took one round trip).
    private(set) var pipelinesSent = 0
    /// The server said it no longer is what this connection was opened for: read-only now (a
    /// primary demoted by a failover) or shutting down. The pool drops the connection, and the
    /// next one libpq makes finds the new primary (`target_session_attrs`).
    private(set) var serverLeftItsRole = false
    /// The pool's generation this connection was opened in (`PostgresClient.renewConnections`).
    var generation = 0
    /// The server it reached (`ServerPin.identityQuery`), when its pool pins one.
    var serverIdentity: String?
    let executor: BlockingExecutor
    /// Where statements sent from a task await their results; nil for connections that only
    /// run on threads of their own (the listener), whose statements all run on `executor`.
    let readiness: SocketReadiness?

    /// Opens a connection and sets the session up (UTC, short idle-in-transaction timeout).
    static func connect(url: String, executor: BlockingExecutor, readiness: SocketReadiness?) async throws -> PostgresConnection {
        try await executor.run { try connectSync(url: url, executor: executor, readiness: readiness) }
    }

    /// The blocking form of `connect`, for threads of our own (the listener).
    static func connectSync(url: String, executor: BlockingExecutor, readiness: SocketReadiness? = nil) throws -> PostgresConnection {
        let handle = PQconnectdb(url)
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            let message = handle.map { Self.lastError($0) } ?? "out of memory"
            PQfinish(handle)
            throw PostgresError(.connectionFailed, message: "cannot connect to PostgreSQL: \(ConnectionString.redacted(message))")
        }
        PostgresNotices.install(on: handle)
        let connection = PostgresConnection(handle: handle, executor: executor, readiness: readiness)
        // Transactions stay short (docs/architecture.md "Event store rules"): an abandoned one must not hold the feed back.
        try connection.executeSync(
            "SET TimeZone = 'UTC'; SET idle_in_transaction_session_timeout = '60s'; SET application_name = 'ledger'",
            [])
        return connection
    }

    private init(handle: OpaquePointer, executor: BlockingExecutor, readiness: SocketReadiness?) {
        self.handle = handle
        self.executor = executor
        self.readiness = readiness
    }

    deinit {
        PQfinish(handle)
    }

    /// False once the connection broke; the pool then drops it.
    public var isUsable: Bool {
        guard let handle, !serverLeftItsRole else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Reads whatever the server sent while the connection sat idle, such as the FATAL
    /// notice of a shutdown, so a dead connection is noticed before it is handed out.
    func probeIdle() -> Bool {
        guard let handle else { return false }
        return PQconsumeInput(handle) == 1 && PQstatus(handle) == CONNECTION_OK
    }

    var transactionStatusIsIdle: Bool {
        guard let handle else { return false }
        return PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    func close() {
        PQfinish(handle)
        handle = nil
    }

    /// Runs a statement with bound parameters. Statements without parameters may contain
    /// several commands; statements with parameters are prepared once per connection.
    @discardableResult
    public func query(_ sql: String, _ parameters: [PostgresParameter] = []) async throws -> PostgresResult {
        try await execute(sql, parameters, binaryResult: false)
    }

    /// Runs a statement whose result columns come back in PostgreSQL's binary format: no
    /// text formatting on the server nor parsing here. Read it with `PostgresRow`'s
    /// `binary…` accessors. For the hot read paths (the feed, stream reads).
    public func queryBinary(_ sql: String, _ parameters: [PostgresParameter]) async throws -> PostgresResult {
        try await execute(sql, parameters, binaryResult: true)
    }

    /// Parameters up to this size are sent from the calling task: they fit the socket's send
    /// buffer, so libpq's write cannot block.
    public static let largestSendFromTask = 32 * 1024

    /// Sends the statement from the calling task and awaits its result through `readiness`
    /// when nothing in that can block: the statement has no parameters or is prepared on this
    /// connection already, and its parameters are small. Anything else (preparing, bulk
    /// parameters) runs on a blocking thread.
    private func execute(_ sql: String, _ parameters: [PostgresParameter], binaryResult: Bool) async throws -> PostgresResult {
        noteFirstSent(queued.first?.sql ?? sql)
        if !queued.isEmpty {
            let statements = queued + [QueuedStatement(sql: sql, parameters: parameters, binaryResult: binaryResult)]
            queued = []
            return try await executePipelined(statements)
        }
        let plain = parameters.isEmpty && !binaryResult
        let name = plain ? nil : preparedName(sql, parameters)
        let wire = parameters.map(\.wireBytes)
        guard let readiness, let handle, plain || name != nil,
            wire.reduce(0, { $0 + ($1?.count ?? 0) }) <= Self.largestSendFromTask
        else {
            return try await executor.run { try self.executeSync(sql, parameters, binaryResult: binaryResult, wire: wire) }
        }
        let sent: Int32
        if let name {
            sent = Self.withParameterArrays(parameters, wire: wire) { values, lengths, formats in
                PQsendQueryPrepared(handle, name, Int32(parameters.count), values, lengths, formats, binaryResult ? 1 : 0)
            }
        } else {
            sent = PQsendQuery(handle, sql)
        }
        guard sent == 1 else { throw sendFailure(handle) }
        let result = try await awaitResult(handle, readiness: readiness)
        try check(result, handle: handle)
        statementsSinceCheckout += 1
        return result
    }

    // MARK: Queued statements

    /// Queues a statement whose result the caller does not need (a lock, a projection row, an
    /// outbox message). It goes out with the next statement this connection awaits, in one
    /// pipeline: one round trip for all of them. They run in order, as if sent one by one; when
    /// a queued statement fails, that later call throws its error — through `translate`, so it
    /// reads as it would have where it was queued; untranslated, it is marked
    /// `raisedByQueuedStatement` — and nothing queued after it runs.
    /// `PostgresClient.transaction` sends what is still queued with its `COMMIT`; outside a
    /// transaction, the statements of one pipeline commit together (PostgreSQL runs a pipeline
    /// up to its sync as one implicit transaction), and `withConnection` sends what is left
    /// before it gives the connection back.
    public func queue(
        _ sql: String, _ parameters: [PostgresParameter] = [], translate: (@Sendable (PostgresError) -> any Error)? = nil
    ) {
        queued.append(QueuedStatement(sql: sql, parameters: parameters, binaryResult: false, translate: translate))
    }

    /// Sends what is queued now.
    public func flush() async throws {
        guard !queued.isEmpty else { return }
        let statements = queued
        queued = []
        _ = try await executePipelined(statements, lastIsAwaited: false)
    }

    /// Runs `body` in a transaction on this connection, committing when it returns and rolling
    /// back when it throws (no retries: see `PostgresClient.transaction`). `begin` goes out with
    /// the body's first statement, in one round trip.
    public func transaction<T>(_ begin: String = "BEGIN", _ body: (PostgresConnection) async throws -> T) async throws -> T {
        queue(begin)
        do {
            let value = try await body(self)
            try await query("COMMIT")
            return value
        } catch {
            discardQueued()
            if isUsable && !transactionStatusIsIdle { _ = try? await query("ROLLBACK") }
            throw error
        }
    }

    var hasQueuedStatements: Bool { !queued.isEmpty }

    /// Records whether the checkout's first statement opens a transaction.
    private func noteFirstSent(_ sql: String) {
        guard checkoutOpenedTransaction == nil else { return }
        checkoutOpenedTransaction = sql.prefix(5).uppercased() == "BEGIN"
    }

    /// Forgets what is queued (the transaction it belonged to is being abandoned).
    public func discardQueued() {
        queued.removeAll()
    }

    /// Runs `statements` in one pipeline and returns the last one's result. When one of them
    /// cannot be sent from the task (not prepared yet, bulk parameters, several commands), they
    /// run one at a time instead, with the same outcome. `lastIsAwaited` is false when every
    /// statement was queued (`flush`): then a failure of any of them is marked as queued.
    private func executePipelined(_ statements: [QueuedStatement], lastIsAwaited: Bool = true) async throws -> PostgresResult {
        noteFirstSent(statements.first?.sql ?? "")
        let wires = statements.map { $0.parameters.map(\.wireBytes) }
        let names = statements.map { $0.isPlain ? nil : preparedName($0.sql, $0.parameters) }
        let size = wires.joined().reduce(0) { $0 + ($1?.count ?? 0) }
        let awaitedIndex = lastIsAwaited ? statements.count - 1 : nil
        // A pipeline takes one command per statement, and no COPY.
        let sendable = zip(statements, names).allSatisfy { statement, name in
            statement.isPlain ? !statement.sql.contains(";") && statement.sql.prefix(4).uppercased() != "COPY" : name != nil
        }
        guard let readiness, let handle, sendable, size <= Self.largestSendFromTask, PQenterPipelineMode(handle) == 1 else {
            var last = PostgresResult(handle: nil)
            for (index, statement) in statements.enumerated() {
                last = try await statement.translatingErrors(awaited: index == awaitedIndex) {
                    try await execute(statement.sql, statement.parameters, binaryResult: statement.binaryResult)
                }
            }
            return last
        }
        for (index, statement) in statements.enumerated() {
            let sent: Int32
            if let name = names[index] {
                sent = Self.withParameterArrays(statement.parameters, wire: wires[index]) { values, lengths, formats in
                    PQsendQueryPrepared(
                        handle, name, Int32(statement.parameters.count), values, lengths, formats, statement.binaryResult ? 1 : 0)
                }
            } else {
                sent = PQsendQueryParams(handle, statement.sql, 0, nil, nil, nil, nil, 0)
            }
            // The connection is left mid-pipeline, not idle, so the pool closes it.
            guard sent == 1 else { throw sendFailure(handle) }
        }
        guard PQpipelineSync(handle) == 1 else { throw sendFailure(handle) }
        pipelinesSent += 1
        var results: [PostgresResult] = []
        for _ in statements { results.append(try await awaitResult(handle, readiness: readiness)) }
        try await awaitPipelineSync(handle, readiness: readiness)
        guard PQexitPipelineMode(handle) == 1 else { throw PostgresError(.connectionLost, message: Self.lastError(handle)) }
        // The first failure is the one to report: the statements after it were not run.
        for (index, (statement, result)) in zip(statements, results).enumerated() {
            try await statement.translatingErrors(awaited: index == awaitedIndex) { try check(result, handle: handle) }
        }
        statementsSinceCheckout += statements.count
        return results[results.count - 1]
    }

    /// Reads up to the end of a pipeline (`PGRES_PIPELINE_SYNC`).
    private func awaitPipelineSync(_ handle: OpaquePointer, readiness: SocketReadiness) async throws {
        while true {
            try await awaitInput(handle, readiness: readiness)
            let result = PostgresResult(handle: PQgetResult(handle))
            if PQresultStatus(result.handle) == PGRES_PIPELINE_SYNC { return }
            guard result.handle != nil else {
                throw PostgresError(.connectionLost, message: "the pipeline ended without its sync")
            }
        }
    }

    /// Reads results until libpq has no more for the statement sent, as `PQexec` does: the
    /// first error if there was one, else the last result.
    private func awaitResult(_ handle: OpaquePointer, readiness: SocketReadiness) async throws -> PostgresResult {
        var outcome = PostgresResult(handle: nil)
        while true {
            try await awaitInput(handle, readiness: readiness)
            guard let raw = PQgetResult(handle) else { return outcome }
            let result = PostgresResult(handle: raw)
            let status = PQresultStatus(raw)
            if outcome.handle == nil || PQresultStatus(outcome.handle) != PGRES_FATAL_ERROR { outcome = result }
            // A COPY hands the connection over to the copy protocol: no further result follows.
            if status == PGRES_COPY_IN || status == PGRES_COPY_OUT { return outcome }
        }
    }

    /// Waits until libpq holds the next result whole (`PQgetResult` will not block).
    private func awaitInput(_ handle: OpaquePointer, readiness: SocketReadiness) async throws {
        while PQisBusy(handle) == 1 {
            try await readiness.waitReadable(PQsocket(handle))
            guard PQconsumeInput(handle) == 1 else {
                throw PostgresError(.connectionLost, message: Self.lastError(handle))
            }
        }
    }

    private func sendFailure(_ handle: OpaquePointer) -> PostgresError {
        if PQstatus(handle) != CONNECTION_OK {
            return PostgresError(.connectionLost, message: Self.lastError(handle))
        }
        return PostgresError(.server, message: Self.lastError(handle))
    }

    /// The blocking form of `query`: for threads of our own (the listener) and for what
    /// `query` hands to the blocking executor (with `wire`, the parameters' bytes it has made).
    @discardableResult
    func executeSync(
        _ sql: String, _ parameters: [PostgresParameter], binaryResult: Bool = false, wire: [[UInt8]?]? = nil
    ) throws -> PostgresResult {
        guard let handle else { throw PostgresError(.connectionLost, message: "connection is closed") }
        noteFirstSent(sql)
        let raw: OpaquePointer?
        if parameters.isEmpty && !binaryResult {
            raw = PQexec(handle, sql)
        } else {
            let name = try prepare(sql, parameters, on: handle)
            raw = Self.withParameterArrays(parameters, wire: wire) { values, lengths, formats in
                PQexecPrepared(handle, name, Int32(parameters.count), values, lengths, formats, binaryResult ? 1 : 0)
            }
        }
        let result = PostgresResult(handle: raw)
        try check(result, handle: handle)
        statementsSinceCheckout += 1
        return result
    }

    /// The name of `sql` prepared for the parameters' types, preparing it on first use. Looked up
    /// on every statement, so without building a key string.
    private func prepare(_ sql: String, _ parameters: [PostgresParameter], on handle: OpaquePointer) throws -> String {
        if let known = preparedName(sql, parameters) { return known }
        let name = "ledger_\(preparedStatementCount)"
        let types = parameters.map { Oid($0.typeOID) }
        let result = PostgresResult(handle: PQprepare(handle, name, sql, Int32(types.count), types))
        try check(result, handle: handle)
        preparedStatements[sql, default: []].append((types, name))
        preparedStatementCount += 1
        return name
    }

    private func preparedName(_ sql: String, _ parameters: [PostgresParameter]) -> String? {
        preparedStatements[sql]?.first(where: { $0.types.elementsEqual(parameters.lazy.map(\.typeOID)) })?.name
    }

    private func check(_ result: PostgresResult, handle: OpaquePointer) throws {
        let status = PQresultStatus(result.handle)
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY, PGRES_COPY_IN, PGRES_COPY_OUT:
            return
        default:
            throw error(from: result, handle: handle)
        }
    }

    private func error(from result: PostgresResult, handle: OpaquePointer) -> PostgresError {
        func field(_ code: Int32) -> String? {
            guard result.handle != nil, let value = PQresultErrorField(result.handle, code) else { return nil }
            return String(cString: value)
        }
        let sqlState = field(Int32(UInt8(ascii: "C")))
        let primary = field(Int32(UInt8(ascii: "M")))
        let detail = field(Int32(UInt8(ascii: "D")))
        let constraint = field(Int32(UInt8(ascii: "n")))
        if PQstatus(handle) != CONNECTION_OK {
            return PostgresError(
                .connectionLost, sqlState: sqlState, message: primary ?? Self.lastError(handle), detail: detail)
        }
        guard let sqlState else {
            return PostgresError(.connectionLost, message: primary ?? Self.lastError(handle))
        }
        let code = PostgresError.code(forSQLState: sqlState)
        if code == .readOnlyServer || code == .connectionLost { serverLeftItsRole = true }
        return PostgresError(code, sqlState: sqlState, message: primary ?? Self.lastError(handle), detail: detail, constraint: constraint)
    }

    static func lastError(_ handle: OpaquePointer) -> String {
        guard let message = PQerrorMessage(handle) else { return "unknown libpq error" }
        return String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Lays the parameters out in one buffer and hands libpq stable pointers into it.
    /// `wire` is `parameters.map(\.wireBytes)` when the caller has it already.
    private static func withParameterArrays<T>(
        _ parameters: [PostgresParameter], wire: [[UInt8]?]? = nil,
        _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<Int32>, UnsafePointer<Int32>) -> T
    ) -> T {
        var storage: [UInt8] = []
        var offsets: [Int?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for (index, parameter) in parameters.enumerated() {
            if let bytes = wire.map({ $0[index] }) ?? parameter.wireBytes {
                offsets.append(storage.count)
                storage.append(contentsOf: bytes)
                storage.append(0)
                lengths.append(Int32(bytes.count))
            } else {
                offsets.append(nil)
                lengths.append(0)
            }
            formats.append(parameter.isBinary ? 1 : 0)
        }
        if storage.isEmpty { storage.append(0) }
        return storage.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            let pointers: [UnsafePointer<CChar>?] = offsets.map { $0.map { base + $0 } }
            return body(pointers, lengths, formats)
        }
    }

    /// A statement of a pipeline (`queue`).
    private struct QueuedStatement {
        let sql: String
        let parameters: [PostgresParameter]
        let binaryResult: Bool
        var translate: (@Sendable (PostgresError) -> any Error)?

        /// Sent as text, without preparing.
        var isPlain: Bool { parameters.isEmpty && !binaryResult }

        /// Runs `body`, throwing its error as this statement's: through `translate`, and when
        /// it is still a `PostgresError` and this is not the awaited statement, marked
        /// `raisedByQueuedStatement`, so the awaited statement's caller cannot take it for its own.
        func translatingErrors<T>(awaited: Bool, _ body: () async throws -> T) async throws -> T {
            do {
                return try await body()
            } catch let error as PostgresError {
                let translated = translate?(error) ?? error
                guard !awaited, var untranslated = translated as? PostgresError else { throw translated }
                untranslated.raisedByQueuedStatement = true
                throw untranslated
            }
        }
    }

    // MARK: LISTEN / NOTIFY

    /// Waits up to `timeout` seconds for data on the socket, then returns the channels notified.
    func waitForNotifications(timeout: Double) throws -> [String] {
        guard let handle else { throw PostgresError(.connectionLost, message: "connection is closed") }
        var channels = drainNotifications(handle)
        if !channels.isEmpty { return channels }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, Int32(timeout * 1000))
        if ready < 0, errno != EINTR {
            throw PostgresError(.connectionLost, message: "poll failed: errno \(errno)")
        }
        guard PQconsumeInput(handle) == 1 else {
            throw PostgresError(.connectionLost, message: Self.lastError(handle))
        }
        channels = drainNotifications(handle)
        return channels
    }

    private func drainNotifications(_ handle: OpaquePointer) -> [String] {
        var channels: [String] = []
        while let notification = PQnotifies(handle) {
            channels.append(String(cString: notification.pointee.relname))
            PQfreemem(notification)
        }
        return channels
    }
}
