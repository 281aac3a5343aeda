import Foundation
import LedgerEventStore
import LedgerTestSupport
import Testing

@Suite("Event store: FeedReader", .timeLimit(.minutes(10)))
struct FeedReaderTests {
    static func append(_ store: EventStore, _ count: Int, type: String = "test.appended") async throws {
        for _ in 0..<count {
            let stream = UUID()
            try await store.append(
                to: stream, streamType: "test", subjectID: stream, expected: .noStream,
                events: [NewEvent(type: type, payload: Array("{}".utf8))])
        }
    }

    @Test("a waiting page answers as soon as an event commits, and an empty page once the wait is over")
    func longPoll() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let reader = FeedReader(store: store, pollInterval: .milliseconds(50))
            let started = ContinuousClock.now
            let empty = try await reader.page(after: .start, limit: 10, types: nil, waitingUpTo: .milliseconds(300))
            #expect(empty.events.isEmpty && ContinuousClock.now - started >= .milliseconds(300))

            async let waited = reader.page(after: .start, limit: 10, types: nil, waitingUpTo: .seconds(60))
            try await Task.sleep(for: .milliseconds(200))
            try await Self.append(store, 1)
            let page = try await waited
            #expect(page.events.count == 1)

            let stopped = try await reader.page(
                after: page.nextCursor, limit: 10, types: nil, waitingUpTo: .seconds(20), stopWaiting: { true })
            #expect(stopped.events.isEmpty)
        }
    }

    @Test("a long page in slices: the events readAll gives, in order, each slice transformed, a short slice ending it")
    func slices() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            try await Self.append(store, 23)
            try await store.waitForFeed(count: 23)
            let reader = FeedReader(store: store, sliceSize: 5)
            let first = try await reader.page(after: .start, limit: 5, types: nil)
            var slices = reader.slices(after: first.nextCursor, remaining: 100, types: nil) { $0.map(\.eventID) }
            var seen = first.events.map(\.eventID)
            var sizes: [Int] = []
            var last = first.nextCursor
            while let slice = try await slices.next() {
                seen += slice.output
                sizes.append(slice.output.count)
                last = slice.nextCursor
            }
            #expect(sizes == [5, 5, 5, 3])
            #expect(seen == (try await store.readAll(after: .start, limit: 100)).events.map(\.eventID))
            #expect(try await store.readAll(after: last, limit: 10).events.isEmpty)
        }
    }

    @Test("a follower sees only its types, every one once, and an empty answer when idle")
    func follow() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let reader = FeedReader(store: store, pollInterval: .milliseconds(50))
            var follower = reader.follow(from: .start, types: ["test.kept"], pageSize: 4)
            #expect(try await follower.next(idle: .milliseconds(100)).isEmpty)
            async let writes: Void = {
                for _ in 0..<6 {
                    try await Self.append(store, 1, type: "test.kept")
                    try await Self.append(store, 2, type: "test.dropped")
                }
            }()
            var seen: [RecordedEvent] = []
            while seen.count < 6 { seen += try await follower.next(idle: .seconds(5)) }
            try await writes
            #expect(seen.allSatisfy { $0.type == "test.kept" } && Set(seen.map(\.eventID)).count == 6)
            #expect(try await follower.next(idle: .milliseconds(100)).isEmpty)
        }
    }
}
