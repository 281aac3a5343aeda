import Foundation
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import LedgerTestSupport
import Testing

@Suite("Event store: commit-order feed", .timeLimit(.minutes(10)))
struct FeedTests {
    /// 8 writers on shared and own streams, some transactions aborted after appending, while
    /// 2 consumers follow the feed: both see every committed event once, in one order, each
    /// stream in version order, and never an aborted one.
    @Test("concurrent writers and followers: nothing skipped, duplicated or reordered")
    func concurrentWritersAndFollowers() async throws {
        struct Abort: Error {}
        try await TestPostgres.withDatabase(maximumConnections: 16) { db in
            let store = db.eventStore()
            let shared = (0..<3).map { _ in UUID() }
            let writers = 8
            let appendsPerWriter = 40

            let committedIDs = try await withThrowingTaskGroup(of: [UUID].self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        let own = UUID()
                        var committed: [UUID] = []
                        for index in 0..<appendsPerWriter {
                            let stream = index % 2 == 0 ? own : shared[(writer + index) % shared.count]
                            let events = (0..<(1 + index % 3)).map { _ in
                                NewEvent(type: "test.appended", payload: Array("{\"w\":\(writer)}".utf8))
                            }
                            if index % 7 == 3 {
                                // Appended inside a transaction that then rolls back.
                                try? await db.client.transaction { connection in
                                    try await store.append(
                                        to: stream, streamType: "test", subjectID: stream, expected: .any,
                                        events: events, on: connection)
                                    throw Abort()
                                }
                                continue
                            }
                            try await store.append(to: stream, streamType: "test", subjectID: stream, expected: .any, events: events)
                            committed += events.map(\.eventID)
                        }
                        return committed
                    }
                }
                return try await group.reduce(into: [UUID]()) { $0 += $1 }
            }
            let expectedCount = committedIDs.count

            // Followers started while writes were happening would see the same; starting them
            // concurrently with the writers is done in the second half below.
            async let first = Self.follow(store, count: expectedCount)
            async let second = Self.follow(store, count: expectedCount)
            let (seenA, seenB) = try await (first, second)

            #expect(seenA.map(\.eventID) == seenB.map(\.eventID))
            #expect(Set(seenA.map(\.eventID)) == Set(committedIDs))
            #expect(seenA.count == expectedCount)
            Self.expectStreamOrder(seenA)
        }
    }

    @Test("followers that run while writers write see every event exactly once, in one order")
    func followersDuringWrites() async throws {
        try await TestPostgres.withDatabase(maximumConnections: 20) { db in
            let store = db.eventStore()
            let shared = (0..<4).map { _ in UUID() }
            let total = 8 * 30
            async let followerA = Self.follow(store, count: total)
            async let followerB = Self.follow(store, count: total)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<8 {
                    group.addTask {
                        let own = UUID()
                        for index in 0..<30 {
                            let stream = index % 3 == 0 ? shared[index % shared.count] : own
                            try await store.append(
                                to: stream, streamType: "test", subjectID: nil, expected: .any,
                                events: [NewEvent(type: "test.appended", payload: Array("{\"w\":\(writer)}".utf8))])
                        }
                    }
                }
                try await group.waitForAll()
            }
            let (seenA, seenB) = try await (followerA, followerB)
            #expect(seenA.count == total)
            #expect(Set(seenA.map(\.eventID)).count == total)
            #expect(seenA.map(\.eventID) == seenB.map(\.eventID))
            Self.expectStreamOrder(seenA)
        }
    }

    @Test("the cursor is opaque, round-trips, and junk is refused")
    func cursors() throws {
        let cursor = FeedCursor(transactionID: 123_456, position: 42)
        #expect(try FeedCursor(token: cursor.token) == cursor)
        #expect(throws: EventStoreError.self) { try FeedCursor(token: "garbage!") }
        #expect(throws: EventStoreError.self) { try FeedCursor(token: Base64URL.encode(Array("v1.x.1".utf8))) }
    }

    @Test("pages continue from their cursor and filter by type")
    func paging() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let stream = UUID()
            for index in 0..<10 {
                try await store.append(
                    to: stream, streamType: "test", subjectID: stream, expected: .any,
                    events: [NewEvent(type: index % 2 == 0 ? "test.even" : "test.odd", payload: Array("{}".utf8))])
            }
            try await store.waitForFeed(count: 10)
            let first = try await store.readAll(after: .start, limit: 4)
            let rest = try await store.readAll(after: first.nextCursor, limit: 100)
            #expect(first.events.count == 4)
            #expect(rest.events.count == 6)
            #expect((first.events + rest.events).map(\.streamVersion) == Array(1...10))
            let empty = try await store.readAll(after: rest.nextCursor, limit: 100)
            #expect(empty.events.isEmpty)
            #expect(empty.nextCursor == rest.nextCursor)
            let odd = try await store.readAll(after: .start, limit: 100, types: ["test.odd"])
            #expect(odd.events.count == 5)
            #expect(odd.events.allSatisfy { $0.type == "test.odd" })
        }
    }

    @Test("the head cursor is the newest event by transaction id as a number, not as text")
    func headCursorOrdersNumerically() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            for _ in 0..<2 {
                try await store.append(
                    to: UUID(), streamType: "test", subjectID: nil, expected: .any, events: [NewEvent(type: "test.made", payload: [])])
            }
            // Transaction ids that cross a digit boundary ("9" sorts after "10" as text).
            try await db.client.query(
                "UPDATE events SET tx_id = (9 + global_position - (SELECT min(global_position) FROM events))::text::xid8")
            let page = try await store.readAll(after: .start, limit: 10)
            #expect(page.events.map(\.cursor.transactionID) == [9, 10])
            #expect(try await store.headCursor() == page.nextCursor)
            #expect(try await store.readAll(after: try await store.headCursor(), limit: 10).events.isEmpty)
        }
    }

    @Test("a transaction still open holds the feed back (a stall, never a skip)")
    func openTransactionHoldsFeed() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let slow = UUID()
            let fast = UUID()
            let holder = PostgresClient(configuration: .init(url: db.url, maximumConnections: 1))
            defer { Task { await holder.shutdown() } }
            try await holder.withConnection { connection in
                try await connection.query("BEGIN")
                try await store.append(
                    to: slow, streamType: "test", subjectID: nil, expected: .any,
                    events: [NewEvent(type: "test.slow", payload: [])], on: connection)
                // A later transaction commits first.
                try await store.append(
                    to: fast, streamType: "test", subjectID: nil, expected: .any,
                    events: [NewEvent(type: "test.fast", payload: [])])
                let during = try await store.readAll(after: .start, limit: 100)
                #expect(during.events.isEmpty)
                try await connection.query("COMMIT")
            }
            try await store.waitForFeed(count: 2)
            let after = try await store.readAll(after: .start, limit: 100)
            #expect(after.events.map(\.type) == ["test.slow", "test.fast"])
        }
    }

    static func follow(_ store: EventStore, count: Int) async throws -> [RecordedEvent] {
        var seen: [RecordedEvent] = []
        for try await event in store.subscribe(after: .start, pageSize: 37, pollInterval: .milliseconds(50)) {
            seen.append(event)
            if seen.count >= count { break }
        }
        return seen
    }

    static func expectStreamOrder(_ events: [RecordedEvent]) {
        var lastVersion: [UUID: Int64] = [:]
        for event in events {
            #expect(event.streamVersion == (lastVersion[event.streamID] ?? 0) + 1)
            lastVersion[event.streamID] = event.streamVersion
        }
    }

    /// Another process's commit reaches this one's followers through `NOTIFY ledger_events`:
    /// two stores on two pools stand for two instances, and a follower of the second waits for
    /// commits far longer than the wake-up takes.
    @Test("a commit by another process wakes this one's followers through the listener")
    func remoteCommitWakesFollowers() async throws {
        try await TestPostgres.withDatabase { db in
            let writer = db.eventStore()
            let otherClient = PostgresClient(configuration: .init(url: db.url, maximumConnections: 2))
            let reader = EventStore(client: otherClient, keyring: SubjectKeyring(masterKey: try MasterKey.generate()))
            let listener = reader.listenForRemoteCommits(url: db.url)
            defer { listener.stop() }
            // Commits go on every 200 ms while a follower of the second store waits (for far
            // longer than a wake-up takes, even on a loaded machine): until the listener has
            // connected they wake nobody; after, the next one does.
            let timeout = Duration.seconds(40)
            let waited = Task {
                let start = ContinuousClock.now
                await reader.waitForCommits(timeout: timeout)
                return ContinuousClock.now - start
            }
            let writing = Task {
                while !Task.isCancelled {
                    let stream = UUID()
                    try await writer.append(
                        to: stream, streamType: "test", subjectID: stream, expected: .any,
                        events: [NewEvent(type: "test.appended", payload: Array("{}".utf8))])
                    try await Task.sleep(for: .milliseconds(200))
                }
            }
            let took = await waited.value
            writing.cancel()
            _ = await writing.result
            await otherClient.shutdown()
            #expect(took < timeout - .seconds(5), "no follower of the second store was woken by the first store's commits")
        }
    }
}
