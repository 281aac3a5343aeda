import Foundation
import LedgerCore
import LedgerEventStore
import LedgerPostgres
import LedgerTestSupport
import Testing

@Suite("Event store: append")
struct AppendTests {
    static func event(_ type: String = "account.registered", _ text: String = "{}") -> NewEvent {
        NewEvent(type: type, payload: Array(text.utf8), metadata: EventMetadata(actor: "test"))
    }

    @Test("appends several events atomically and reads them back in version order")
    func appendAndRead() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let stream = UUID()
            let first = try await store.append(
                to: stream, streamType: "account", subjectID: stream, expected: .noStream,
                events: [Self.event("account.registered", #"{"email":"a@b.c"}"#), Self.event("email.verified")])
            #expect(first.firstVersion == 1)
            #expect(first.lastVersion == 2)
            #expect(!first.replayed)
            let second = try await store.append(
                to: stream, streamType: "account", subjectID: stream, expected: .exact(2), events: [Self.event("session.started")])
            #expect(second.firstVersion == 3)
            let events = try await store.readStream(stream)
            #expect(events.map(\.type) == ["account.registered", "email.verified", "session.started"])
            #expect(events.map(\.streamVersion) == [1, 2, 3])
            #expect(events[0].payload.map { String(decoding: $0, as: UTF8.self) } == #"{"email":"a@b.c"}"#)
            #expect(events[0].metadata.actor == "test")
            #expect(events[0].recordedAt == db.clock.now() || abs(events[0].recordedAt.timeIntervalSince(db.clock.now())) < 0.000_001)
            #expect(try await store.streamVersion(stream) == 3)
        }
    }

    @Test("a whole stream reads back however long it is: past a page of 10,000 nothing is cut")
    func longStream() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let stream = UUID()
            var version: Int64 = 0
            for _ in 0..<3 {
                let appended = try await store.append(
                    to: stream, streamType: "account", subjectID: stream, expected: version == 0 ? .noStream : .exact(version),
                    events: (0..<3_500).map { _ in Self.event("profile.updated") })
                version = appended.lastVersion
            }
            let events = try await store.readStream(stream)
            #expect(events.count == 10_500)
            #expect(events.map(\.streamVersion) == Array(1...10_500))
            #expect(try await store.readStream(stream, fromVersion: 10_001).count == 500)
            #expect(try await store.readStream(stream, limit: 10).count == 10)
        }
    }

    @Test("a wrong expected version is a typed conflict carrying the actual version")
    func expectedVersionConflict() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let stream = UUID()
            try await store.append(to: stream, streamType: "account", subjectID: nil, expected: .noStream, events: [Self.event()])
            for expectation in [ExpectedVersion.noStream, .exact(0), .exact(5)] {
                let error = await #expect(throws: EventStoreError.self) {
                    try await store.append(to: stream, streamType: "account", subjectID: nil, expected: expectation, events: [Self.event()])
                }
                #expect(error?.code == .wrongExpectedVersion)
                #expect(error?.actualVersion == 1)
            }
            let missing = await #expect(throws: EventStoreError.self) {
                try await store.append(to: UUID(), streamType: "account", subjectID: nil, expected: .streamExists, events: [Self.event()])
            }
            #expect(missing?.actualVersion == 0)
            try await store.append(to: stream, streamType: "account", subjectID: nil, expected: .any, events: [Self.event()])
            #expect(try await store.streamVersion(stream) == 2)
        }
    }

    @Test("a queued append goes out with the commit; its conflict is thrown there, typed, and rolls the transaction back")
    func queuedAppend() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let stream = UUID()
            try await db.client.transaction { connection in
                try await store.queueAppend(
                    to: stream, streamType: "account", subjectID: stream, expected: .noStream,
                    events: [Self.event("account.registered", #"{"email":"a@b.c"}"#)], on: connection)
            }
            let stored = try await store.readStream(stream)
            #expect(stored.map(\.type) == ["account.registered"])
            #expect(stored[0].payload.map { String(decoding: $0, as: UTF8.self) } == #"{"email":"a@b.c"}"#)
            let other = UUID()
            let error = await #expect(throws: EventStoreError.self) {
                try await db.client.transaction { connection in
                    try await store.queueAppend(
                        to: other, streamType: "account", subjectID: nil, expected: .noStream, events: [Self.event()], on: connection)
                    try await store.queueAppend(
                        to: stream, streamType: "account", subjectID: stream, expected: .noStream, events: [Self.event()], on: connection)
                }
            }
            #expect(error?.code == .wrongExpectedVersion)
            #expect(error?.actualVersion == 1)
            #expect(try await store.streamVersion(other) == 0)
            #expect(try await store.streamVersion(stream) == 1)
        }
    }

    @Test("a queued statement's failure thrown by an append is not read as the append's own")
    func queuedFailureBeforeAppend() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            try await db.client.query("CREATE TABLE claims (name text PRIMARY KEY)")
            try await db.client.query("INSERT INTO claims VALUES ($1)", ["taken"])
            let stream = UUID()
            let error = await #expect(throws: PostgresError.self) {
                try await db.client.transaction { connection in
                    connection.queue("INSERT INTO claims VALUES ($1)", ["taken"])
                    try await store.append(
                        to: stream, streamType: "account", subjectID: nil, expected: .noStream, events: [Self.event()], on: connection)
                }
            }
            // Not `EventStoreError.idempotencyConflict`, which a unique violation of the append itself means.
            #expect(error?.code == .uniqueViolation)
            #expect(try await store.streamVersion(stream) == 0)
        }
    }

    @Test("two racing appends with the same expected version: exactly one wins")
    func racingAppends() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let stream = UUID()
            try await store.append(to: stream, streamType: "account", subjectID: stream, expected: .noStream, events: [Self.event()])
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        do {
                            try await store.append(
                                to: stream, streamType: "account", subjectID: stream, expected: .exact(1),
                                events: [Self.event("email.verified")])
                            return true
                        } catch let error as EventStoreError {
                            return error.code == .wrongExpectedVersion ? false : true
                        } catch {
                            return true
                        }
                    }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1)
            #expect(try await store.streamVersion(stream) == 2)
        }
    }

    @Test("a retried append returns the original result; reusing an id for other content is refused")
    func idempotency() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let stream = UUID()
            let events = [Self.event("account.registered", #"{"n":1}"#), Self.event("email.verified", #"{"n":2}"#)]
            let original = try await store.append(
                to: stream, streamType: "account", subjectID: stream, expected: .noStream, events: events)
            db.clock.advance(by: 5)
            let retried = try await store.append(
                to: stream, streamType: "account", subjectID: stream, expected: .noStream, events: events)
            #expect(retried.replayed)
            #expect(retried.firstVersion == original.firstVersion)
            #expect(retried.lastVersion == original.lastVersion)
            #expect(retried.firstPosition == original.firstPosition)
            #expect(try await store.readStream(stream).count == 2)

            var altered = events
            altered[1].payload = Array(#"{"n":3}"#.utf8)
            let conflict = await #expect(throws: EventStoreError.self) {
                try await store.append(to: stream, streamType: "account", subjectID: stream, expected: .any, events: altered)
            }
            #expect(conflict?.code == .idempotencyConflict)

            let partial = [events[0], Self.event("session.started")]
            let partialConflict = await #expect(throws: EventStoreError.self) {
                try await store.append(to: stream, streamType: "account", subjectID: stream, expected: .any, events: partial)
            }
            #expect(partialConflict?.code == .idempotencyConflict)

            let otherStream = await #expect(throws: EventStoreError.self) {
                try await store.append(to: UUID(), streamType: "account", subjectID: nil, expected: .any, events: [events[0]])
            }
            #expect(otherStream?.code == .idempotencyConflict)
            #expect(try await store.readStream(stream).count == 2)
        }
    }

    @Test("group-committed appends fail alone: one conflict among many concurrent appends")
    func groupCommitIsolation() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let taken = UUID()
            try await store.append(to: taken, streamType: "account", subjectID: taken, expected: .noStream, events: [Self.event()])
            let outcomes = await withTaskGroup(of: (UUID, Bool).self) { group in
                for index in 0..<40 {
                    group.addTask {
                        let stream = index == 17 ? taken : UUID()
                        do {
                            try await store.append(
                                to: stream, streamType: "account", subjectID: stream, expected: .noStream,
                                events: [Self.event("account.registered", "{\"i\":\(index)}"), Self.event("email.verified")])
                            return (stream, true)
                        } catch {
                            return (stream, false)
                        }
                    }
                }
                return await group.reduce(into: [(UUID, Bool)]()) { $0.append($1) }
            }
            #expect(outcomes.filter { !$0.1 }.map(\.0) == [taken])
            for (stream, succeeded) in outcomes where succeeded {
                let events = try await store.readStream(stream)
                #expect(events.map(\.streamVersion) == [1, 2])
                #expect(try await store.verify(streamID: stream).ok)
            }
            #expect(try await store.readStream(taken).count == 1)
        }
    }

    @Test("event types must be lower snake case and dot-separated")
    func eventTypeRule() async throws {
        #expect(NewEvent.isValidType("account.registered"))
        #expect(NewEvent.isValidType("phone.otp_issued"))
        #expect(!NewEvent.isValidType("AccountRegistered"))
        #expect(!NewEvent.isValidType("account"))
        #expect(!NewEvent.isValidType("account..x"))
        try await TestPostgres.withDatabase { db in
            let error = await #expect(throws: EventStoreError.self) {
                try await db.eventStore().append(
                    to: UUID(), streamType: "account", subjectID: nil, expected: .any, events: [Self.event("Bad.Type")])
            }
            #expect(error?.code == .invalidEvent)
        }
    }
}
