import Foundation
import LedgerCore
import LedgerCrypto
import LedgerPostgres
import Logging

/// The append-only store of identity events on PostgreSQL (DESIGN.md §3).
///
/// Appends are one `ledger_append` call: one round trip, one commit when run on its own.
/// Callers that update projections in the same transaction use the `on:` variants inside
/// `PostgresClient.transaction`.
public final class EventStore: Sendable {
    public let client: PostgresClient
    public let keyring: SubjectKeyring
    public let clock: any LedgerClock
    let wakeups: FeedWakeups
    let logger: Logger

    public init(
        client: PostgresClient, keyring: SubjectKeyring, clock: any LedgerClock = SystemClock(),
        logger: Logger = Logger(label: "ledger.event-store")
    ) {
        self.client = client
        self.keyring = keyring
        self.clock = clock
        self.logger = logger
        self.wakeups = FeedWakeups(client: client)
    }

    /// Appends `events` to a stream atomically, in their own transaction.
    ///
    /// - Parameters:
    ///   - subjectID: whose data key seals the payloads (nil stores them unencrypted, for
    ///     streams without personal data).
    ///   - expected: the optimistic-concurrency check; a mismatch throws `wrongExpectedVersion`.
    /// - Returns: the original result when the same event ids were appended before.
    @discardableResult
    public func append(
        to streamID: UUID, streamType: String, subjectID: UUID?, expected: ExpectedVersion, events: [NewEvent]
    ) async throws -> AppendResult {
        let result = try await client.withConnection { connection in
            try await append(to: streamID, streamType: streamType, subjectID: subjectID, expected: expected,
                             events: events, on: connection)
        }
        wakeups.committed()
        return result
    }

    /// Appends inside the caller's transaction (or autocommit when none is open). The caller
    /// must call `committed()` after its commit so followers wake promptly.
    @discardableResult
    public func append(
        to streamID: UUID, streamType: String, subjectID: UUID?, expected: ExpectedVersion, events: [NewEvent],
        on connection: PostgresConnection
    ) async throws -> AppendResult {
        guard !events.isEmpty else { throw EventStoreError(.invalidEvent, "an append needs at least one event") }
        for event in events where !NewEvent.isValidType(event.type) || event.schemaVersion < 1 {
            throw EventStoreError(.invalidEvent, "event type '\(event.type)' is not lower snake case, dot-separated")
        }
        var sealedPayloads: [UInt8] = []
        var lengths: [String] = []
        if let subjectID {
            let key = try await keyring.dataKey(for: subjectID, on: connection)
            for event in events {
                let sealed = try key.seal(event.payload, eventID: event.eventID)
                sealedPayloads.append(contentsOf: sealed)
                lengths.append(String(sealed.count))
            }
        } else {
            for event in events {
                sealedPayloads.append(contentsOf: event.payload)
                lengths.append(String(event.payload.count))
            }
        }
        let metadata = "[" + events.map(\.metadata.json).joined(separator: ",") + "]"
        do {
            let result = try await connection.query(
                "SELECT * FROM ledger_append($1, $2, $3, $4, $5, $6, $7::uuid[], $8::text[], $9::int[], $10, $11::int[], $12::jsonb)",
                [
                    .uuid(streamID), .text(streamType), .text(expected.sqlKind), .int(expected.sqlVersion),
                    subjectID.map { .uuid($0) } ?? .null, .timestamp(clock.now()),
                    .text("{" + events.map(\.eventID.lowercased).joined(separator: ",") + "}"),
                    .text("{" + events.map(\.type).joined(separator: ",") + "}"),
                    .text("{" + events.map { String($0.schemaVersion) }.joined(separator: ",") + "}"),
                    .bytea(sealedPayloads),
                    .text("{" + lengths.joined(separator: ",") + "}"),
                    .text(metadata),
                ])
            let row = result[0]
            return AppendResult(
                streamID: streamID,
                firstVersion: try row.int(0) ?? 0, lastVersion: try row.int(1) ?? 0,
                firstPosition: try row.int(2) ?? 0, lastPosition: try row.int(3) ?? 0,
                replayed: try row.bool(4) ?? false)
        } catch let error as PostgresError {
            throw Self.translate(error)
        }
    }

    /// Tells followers in this process (at once) and elsewhere (by NOTIFY) that events were
    /// committed. A hint only: readers also poll.
    public func committed() {
        wakeups.committed()
    }

    static func translate(_ error: PostgresError) -> any Error {
        switch error.sqlState {
        case "LA001":
            return EventStoreError(
                .wrongExpectedVersion, "the stream is at another version than expected",
                actualVersion: error.detail.flatMap { Int64($0) })
        case "LA003":
            return EventStoreError(.idempotencyConflict, "an event id was already used for other content")
        case "LA004":
            return EventStoreError(.subjectKeyDestroyed, "the subject's data key is missing or destroyed")
        case "LA002":
            return EventStoreError(.invalidEvent, error.message)
        case "23514":
            return EventStoreError(.invalidEvent, "an event breaks a store rule: \(error.message)")
        default:
            return error
        }
    }
}
