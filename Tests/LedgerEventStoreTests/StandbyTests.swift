import Foundation
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import LedgerTestSupport
import Testing

/// Readers on a hot standby (`LEDGER_READ_DATABASE_URL`): a primary and a standby made by
/// `pg_basebackup -R` on this machine, written on one and read on the other.
@Suite("Event store: readers on a hot standby", .timeLimit(.minutes(10)))
struct StandbyTests {
    /// A primary with the schema, its standby, and a store on each.
    func withStandby(_ body: (_ primary: EventStore, _ standby: EventStore, _ standbyClient: PostgresClient) async throws -> Void)
        async throws
    {
        try await TestReplication.withPrimaryAndStandby { primaryClient, standbyClient in
            let store = EventStore(client: primaryClient, keyring: SubjectKeyring(masterKey: try MasterKey.generate()))
            try await body(store, store.reading(from: standbyClient), standbyClient)
        }
    }

    /// Everything the feed shows, page by page from `cursor`, until it has `count` events.
    static func drain(_ store: EventStore, after cursor: FeedCursor = .start, count: Int) async throws -> [RecordedEvent] {
        var seen: [RecordedEvent] = []
        var cursor = cursor
        let deadline = ContinuousClock.now + .seconds(60)
        while seen.count < count && ContinuousClock.now < deadline {
            let page = try await store.readAll(after: cursor, limit: 50)
            seen += page.events
            cursor = page.nextCursor
            if page.events.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        }
        return seen
    }

    @Test(
        "the standby's feed has every event once, in the primary's order, while writers write; cursors work across both; a paused standby shows what it has, never a gap"
    )
    func standbyFeed() async throws {
        try await withStandby { primary, standby, standbyClient in
            let shared = (0..<3).map { _ in UUID() }
            let total = 8 * 25
            async let followed = FeedTests.follow(standby, count: total)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<8 {
                    group.addTask {
                        let own = UUID()
                        for index in 0..<25 {
                            let stream = index % 3 == 0 ? shared[index % shared.count] : own
                            // Half the streams are sealed under a data key: the standby opens them too.
                            try await primary.append(
                                to: stream, streamType: "test", subjectID: writer % 2 == 0 ? stream : nil, expected: .any,
                                events: [NewEvent(type: "test.appended", payload: Array("{\"w\":\(writer),\"i\":\(index)}".utf8))])
                        }
                    }
                }
                try await group.waitForAll()
            }
            let onStandby = try await followed
            let onPrimary = try await Self.drain(primary, count: total)
            #expect(onStandby.count == total && onPrimary.count == total)
            #expect(onStandby.map(\.eventID) == onPrimary.map(\.eventID))
            #expect(onStandby.map(\.payload) == onPrimary.map(\.payload))
            FeedTests.expectStreamOrder(onStandby)

            // A cursor from the primary goes on on the standby, and the reverse.
            let half = try await primary.readAll(after: .start, limit: total / 2)
            let rest = try await Self.drain(standby, after: half.nextCursor, count: total - total / 2)
            #expect((half.events + rest).map(\.eventID) == onPrimary.map(\.eventID))
            let firstOnStandby = try await standby.readAll(after: .start, limit: 60)
            let restOnPrimary = try await Self.drain(primary, after: firstOnStandby.nextCursor, count: total - 60)
            #expect((firstOnStandby.events + restOnPrimary).map(\.eventID) == onPrimary.map(\.eventID))

            // Replay paused: the standby answers with what it has (a prefix), never a gap; then catches up.
            let last = onPrimary.last!.cursor
            try await standbyClient.query("SELECT pg_wal_replay_pause()")
            var later: [UUID] = []
            for index in 0..<20 {
                let event = NewEvent(type: "test.appended", payload: Array("{\"later\":\(index)}".utf8))
                try await primary.append(to: shared[0], streamType: "test", subjectID: nil, expected: .any, events: [event])
                later.append(event.eventID)
            }
            let whilePaused = try await standby.readAll(after: last, limit: 100).events.map(\.eventID)
            #expect(whilePaused == Array(later.prefix(whilePaused.count)))
            try await standbyClient.query("SELECT pg_wal_replay_resume()")
            let caughtUp = try await Self.drain(standby, after: last, count: later.count)
            #expect(caughtUp.map(\.eventID) == later)
        }
    }

    @Test("a write that reaches a read-only server is read_only_server, a temporary unavailability, and its connection is dropped")
    func readOnlyServer() async throws {
        try await withStandby { _, _, standbyClient in
            try await standbyClient.withConnection { connection in
                do {
                    _ = try await connection.query("CREATE TABLE not_on_a_standby (n int)")
                    Issue.record("a standby took a write")
                } catch let error as PostgresError {
                    #expect(error.code == .readOnlyServer && error.sqlState == "25006")
                    #expect(error.isTemporarilyUnavailable)
                }
                #expect(!connection.isUsable, "a demoted primary's connection is not handed out again")
            }
            #expect(try await standbyClient.query("SELECT 1").rows.first?.string(0) == "1", "the pool opens another")
        }
    }
}
