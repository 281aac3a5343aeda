import Foundation
import LedgerEvents
import Synchronization
import Testing

/// A feed held in memory: what `FeedReader` needs of a source, without a database.
final class InMemoryFeedSource: FeedSource {
    private let state = Mutex<(events: [RecordedEvent], generation: UInt64)>(([], 0))

    var commitGeneration: UInt64 { state.withLock { $0.generation } }

    func append(_ count: Int) {
        state.withLock { state in
            for _ in 0..<count {
                let position = Int64(state.events.count + 1)
                state.events.append(
                    RecordedEvent(
                        cursor: FeedCursor(transactionID: UInt64(position), position: position), eventID: UUID(), streamID: UUID(),
                        streamVersion: 1, type: position.isMultiple(of: 2) ? "test.even" : "test.odd", schemaVersion: 1, subjectID: nil,
                        payload: Array("{}".utf8), metadataJSON: "{}", recordedAt: Date()))
            }
            state.generation += 1
        }
    }

    func readAll(after cursor: FeedCursor, limit: Int, types: [String]?) async throws -> FeedPage {
        let events = state.withLock { state in
            Array(state.events.lazy.filter { $0.cursor > cursor && (types?.contains($0.type) ?? true) }.prefix(limit))
        }
        return FeedPage(events: events, nextCursor: events.last?.cursor ?? cursor)
    }

    func waitForCommit(after generation: UInt64, timeout: Duration) async {
        let deadline = ContinuousClock.now + timeout
        while commitGeneration == generation, ContinuousClock.now < deadline, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}

@Suite("FeedReader over an in-memory source", .timeLimit(.minutes(10)))
struct FeedReaderInMemoryTests {
    @Test("a follower sees every event once, in order, while a writer appends in bursts")
    func followerWhileWriting() async throws {
        let source = InMemoryFeedSource()
        let reader = FeedReader(store: source, pollInterval: .milliseconds(5))
        let writer = Task {
            for burst in 0..<40 {
                source.append(burst % 7 + 1)
                try await Task.sleep(for: .milliseconds(1))
            }
        }
        var follower = reader.follow(from: .start, types: nil, pageSize: 3)
        var seen: [Int64] = []
        let total = (0..<40).reduce(0) { $0 + $1 % 7 + 1 }
        while seen.count < total {
            seen += try await follower.next(idle: .seconds(5)).map(\.globalPosition)
        }
        try await writer.value
        #expect(seen == Array(1...Int64(total)))
        #expect(try await follower.next(idle: .milliseconds(20)).isEmpty)
    }

    @Test("a long page in slices of a type filter gives what one read would, and a short slice ends it")
    func filteredSlices() async throws {
        let source = InMemoryFeedSource()
        source.append(25)
        let reader = FeedReader(store: source, sliceSize: 4)
        var slices = reader.slices(after: .start, remaining: 100, types: ["test.even"]) { $0.map(\.globalPosition) }
        var positions: [Int64] = []
        while let slice = try await slices.next() { positions += slice.output }
        #expect(positions == Array(stride(from: 2, through: 24, by: 2)))
    }

    @Test("a page that waits answers when a commit arrives, not at the end of its wait")
    func longPoll() async throws {
        let source = InMemoryFeedSource()
        let reader = FeedReader(store: source, pollInterval: .seconds(30))
        async let page = reader.page(after: .start, limit: 10, types: nil, waitingUpTo: .seconds(30))
        try await Task.sleep(for: .milliseconds(50))
        let started = ContinuousClock.now
        source.append(2)
        #expect(try await page.events.count == 2)
        #expect(ContinuousClock.now - started < .seconds(10))
    }
}
