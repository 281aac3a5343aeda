import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerEventStore
import LedgerIdentity
import LedgerTestSupport
import Testing

@Suite("Account snapshots", .timeLimit(.minutes(10)))
struct AccountSnapshotTests {
    /// Appends `count` varied events (refreshes, holds, links, grants, profile edits) to the
    /// account, one batch a minute; returns the times the batches were recorded at.
    func grow(_ accountID: UUID, sessionID: UUID, count: Int, store: EventStore, db: TestDatabase) async throws -> [Date] {
        var times: [Date] = []
        var written = 0
        while written < count {
            db.clock.advance(by: 60)
            let now = db.clock.now()
            let batch = (written..<min(written + 50, count)).map { index -> AccountEvent in
                switch index % 7 {
                case 0:
                    return .sessionRefreshed(
                        .init(
                            sessionID: sessionID, accessTokenHash: Hex.encode(Array("a\(index)".utf8)),
                            refreshTokenHash: Hex.encode(Array("r\(index)".utf8)),
                            accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(86400)))
                case 1:
                    return .holdPlaced(
                        Hold(
                            ref: "h\(index % 40)", kind: .upcomingBooking, startsAt: now, title: "Plan \(index)",
                            amount: Money(currency: "GEL", minor: Int64(index)), releasesAt: now.addingTimeInterval(3600)))
                case 2: return .holdReleased(.init(ref: "h\((index + 13) % 40)"))
                case 3:
                    return .emailVerificationSent(
                        .init(
                            email: "snap@example.com", linkID: UUID(), expiresAt: now.addingTimeInterval(0.123_456),
                            tokenHash: Hex.encode(Array("t\(index)".utf8))))
                case 4:
                    return .reauthGranted(
                        .init(
                            grantID: UUID(), sessionID: sessionID, method: "password", tokenHash: Hex.encode(Array("g\(index)".utf8)),
                            expiresAt: now.addingTimeInterval(900), linkID: nil))
                case 5:
                    return .providerLinked(
                        .init(provider: index % 2 == 0 ? .apple : .google, subject: "sub-\(index)", email: nil, emailVerified: false))
                default: return .profileUpdated(.init(displayName: "Name \(index) ő"))
                }
            }
            try await store.append(
                to: accountID, streamType: "account", subjectID: accountID, expected: .any,
                events: try batch.map { NewEvent(type: $0.type, schemaVersion: $0.schemaVersion, payload: try $0.encodedPayload()) })
            times.append(now)
            written += batch.count
        }
        return times
    }

    /// The fold from version 1 without any snapshot, cut at the first event after `at`.
    func reference(_ accountID: UUID, at: Date?, store: EventStore) async throws -> AccountState {
        var state = AccountState(accountID: accountID)
        for recorded in try await store.readStream(accountID) {
            if let at, recorded.recordedAt > at { break }
            guard let payload = recorded.payload,
                let event = try AccountEvent.decode(type: recorded.type, schemaVersion: recorded.schemaVersion, payload: payload)
            else {
                state.version += 1
                continue
            }
            evolve(&state, event, at: recorded.recordedAt)
        }
        return state
    }

    func snapshotVersions(_ accountID: UUID, _ db: TestDatabase) async throws -> [Int64] {
        try await db.client.query(
            "SELECT version FROM stream_snapshots WHERE stream_id = $1 ORDER BY version", [.uuid(accountID)]
        ).rows.compactMap { try $0.int(0) }
    }

    @Test("a long account gets a snapshot from its next command; folds from it equal folds from version 1; a rebuild rewrites them")
    func longHistory() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let service = try db.accountService()
            let session = try await service.signUp(
                email: "snap@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: "ios")
            let times = try await grow(session.accountID, sessionID: session.sessionID, count: 2_150, store: store, db: db)
            let audit = AccountAudit(store: store)
            #expect(try await snapshotVersions(session.accountID, db).isEmpty)

            // A command folds 2,150+ events and leaves a snapshot of what it loaded.
            let loadedVersion = try await store.streamVersion(session.accountID)
            db.clock.advance(by: 60)
            _ = try await service.signIn(email: "snap@example.com", password: "violet-harbor-91", device: "web")
            #expect(try await snapshotVersions(session.accountID, db) == [loadedVersion])
            #expect(try await service.account(session.accountID) == (try await reference(session.accountID, at: nil, store: store)))
            let instants = [times[0], times[10], times[19], times[20], times[22], times.last!, times.last!.addingTimeInterval(30)]
            for at in instants {
                #expect(
                    try await audit.state(session.accountID, at: at)?.state
                        == (try await reference(session.accountID, at: at, store: store)))
            }

            // A rebuild replaces them with one every 1,000 versions.
            try await AccountProjections.rebuild(store: store)
            #expect(try await snapshotVersions(session.accountID, db) == [AccountSnapshots.interval, 2 * AccountSnapshots.interval])
            let expected = try await reference(session.accountID, at: nil, store: store)
            let expectedLate = try await reference(session.accountID, at: times[22], store: store)
            #expect(try await service.account(session.accountID) == expected)

            // Proof that folds start from the snapshot: without the events the first one covers,
            // the state is unchanged; an instant before that snapshot's last event cannot use it.
            try await db.client.query(
                "DELETE FROM events WHERE stream_id = $1 AND stream_version <= $2",
                [.uuid(session.accountID), .int(AccountSnapshots.interval)])
            #expect(try await service.account(session.accountID) == expected)
            #expect(try await audit.state(session.accountID, at: times[22])?.state == expectedLate)
            #expect(try await audit.state(session.accountID, at: times[10]) == nil)

            // A snapshot that does not open (edited, or moved to another version) is not used.
            try await db.client.query(
                "UPDATE stream_snapshots SET sealed = overlay(sealed placing '\\xff'::bytea from 30 for 1) WHERE stream_id = $1",
                [.uuid(session.accountID)])
            #expect(try await service.account(session.accountID).exists == false)
        }
    }

    @Test("snapshots are bound to their row: one moved to another version is ignored")
    func boundToRow() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let service = try db.accountService()
            let session = try await service.signUp(
                email: "snap@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: "ios")
            _ = try await grow(session.accountID, sessionID: session.sessionID, count: 1_100, store: store, db: db)
            try await AccountProjections.rebuild(store: store)
            #expect(try await snapshotVersions(session.accountID, db) == [1000])
            try await db.client.query("DELETE FROM events WHERE stream_id = $1 AND stream_version <= 10", [.uuid(session.accountID)])
            #expect(try await service.account(session.accountID).exists)
            try await db.client.query("UPDATE stream_snapshots SET version = 999 WHERE stream_id = $1", [.uuid(session.accountID)])
            #expect(try await service.account(session.accountID).exists == false)
        }
    }
}
