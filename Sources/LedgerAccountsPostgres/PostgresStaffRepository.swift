import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres

/// Staff on the event store, one stream each (stream type `staff`, sealed under the staff
/// member's own data key), projected in the events' transaction to `staff`, `staff_passkeys`
/// and `staff_sessions` (schema/035) for the console's lookups.
public struct PostgresStaffRepository: StaffRepository {
    let store: EventStore
    let clock: any LedgerClock
    static let streamType = "staff"

    public init(store: EventStore, clock: any LedgerClock) {
        self.store = store
        self.clock = clock
    }

    public func execute(
        _ staffID: UUID, outbox: [OutboxMessage], _ command: @Sendable (StaffState) throws -> StaffCommand
    ) async throws -> (StaffState, [StaffEvent]) {
        let now = clock.now()
        let outcome = try await store.client.transaction { connection -> (StaffState, [StaffEvent]) in
            store.lockStream(staffID, on: connection)
            let state = try await load(staffID, on: connection)
            let decided = try decide(state, try command(state), now: now)
            guard !decided.isEmpty else { return (state, []) }
            let stored = try decided.map { try $0.stored() }
            let metadata = EventMetadata.current.withActor(default: "staff:\(staffID.lowercased)")
            try await store.queueAppend(
                to: staffID, streamType: Self.streamType, subjectID: staffID, expected: .exact(state.version),
                events: stored.map {
                    NewEvent(type: $0.event.type, schemaVersion: $0.event.schemaVersion, payload: $0.payload, metadata: metadata)
                },
                recordedAt: now, on: connection)
            let events = stored.map(\.event)
            let after = events.reduce(state) { evolve($0, $1, at: now) }
            project(after, events: events, on: connection)
            for message in outbox { Outbox.enqueue(message, accountID: nil, at: now, on: connection) }
            return (after, events)
        }
        if !outcome.1.isEmpty { store.committed() }
        return outcome
    }

    public func load(_ staffID: UUID) async throws -> StaffState {
        try await store.client.withConnection { try await load(staffID, on: $0) }
    }

    func load(_ staffID: UUID, on connection: PostgresConnection) async throws -> StaffState {
        var state = StaffState(staffID: staffID)
        for recorded in try await store.readStream(staffID, on: connection) {
            state.version += 1
            guard let payload = recorded.payload,
                let event = try StaffEvent.decode(type: recorded.type, schemaVersion: recorded.schemaVersion, payload: payload)
            else { continue }
            state.version -= 1
            state = evolve(state, event, at: recorded.recordedAt)
        }
        return state
    }

    /// The lookups, as the events leave them.
    private func project(_ state: StaffState, events: [StaffEvent], on connection: PostgresConnection) {
        let invitationHash: PostgresParameter = state.invitation.flatMap { Hex.decode($0.tokenHash) }.map { .bytea($0) } ?? .null
        connection.queue(
            """
            INSERT INTO staff (staff_id, email_normalized, role, invitation_sha256, invitation_expires_at, invited_at, removed_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            ON CONFLICT (staff_id) DO UPDATE SET email_normalized = EXCLUDED.email_normalized, role = EXCLUDED.role,
                invitation_sha256 = EXCLUDED.invitation_sha256, invitation_expires_at = EXCLUDED.invitation_expires_at,
                removed_at = EXCLUDED.removed_at
            """,
            [
                .uuid(state.staffID), .text(EmailAddress.normalize(state.email ?? "")), .text(state.role.rawValue), invitationHash,
                state.invitation.map { .timestamp($0.expiresAt) } ?? .null, .timestamp(state.invitedAt ?? clock.now()),
                state.removedAt.map { .timestamp($0) } ?? .null,
            ],
            // One live staff member per address: a clash is refused, not swallowed.
            translate: { error -> any Error in
                error.code == .uniqueViolation ? StaffError(.alreadyStaff, "Someone on staff has this address.") : error
            })
        for event in events {
            switch event {
            case .passkeyRegistered(let passkey):
                connection.queue(
                    "INSERT INTO staff_passkeys (credential_sha256, staff_id, passkey_id) VALUES ($1, $2, $3)",
                    [
                        .bytea(AccountState.Passkey.lookupKey(credentialID: passkey.credentialID)), .uuid(state.staffID),
                        .uuid(passkey.passkeyID),
                    ])
            case .signedIn(let signedIn):
                connection.queue(
                    "INSERT INTO staff_sessions (token_sha256, staff_id, session_id, expires_at) VALUES ($1, $2, $3, $4)",
                    [
                        .bytea(Hex.decode(signedIn.tokenHash) ?? []), .uuid(state.staffID), .uuid(signedIn.sessionID),
                        .timestamp(signedIn.expiresAt),
                    ])
            case .signedOut(let signedOut):
                connection.queue(
                    "UPDATE staff_sessions SET ended_at = $3 WHERE staff_id = $1 AND session_id = $2",
                    [
                        .uuid(state.staffID), .uuid(signedOut.sessionID),
                        .timestamp(state.sessions[signedOut.sessionID]?.endedAt ?? clock.now()),
                    ])
            case .invited, .passkeyConfirmed, .removed:
                continue
            }
        }
    }

    public func staff(email normalized: String) async throws -> UUID? {
        let rows = try await store.client.query(
            "SELECT staff_id FROM staff WHERE email_normalized = $1 AND removed_at IS NULL", [.text(normalized)])
        return rows.rowCount == 0 ? nil : try rows[0].uuid(0)
    }

    public func staff(invitationTokenHash: [UInt8]) async throws -> UUID? {
        let rows = try await store.client.query(
            "SELECT staff_id FROM staff WHERE invitation_sha256 = $1 AND removed_at IS NULL", [.bytea(invitationTokenHash)])
        return rows.rowCount == 0 ? nil : try rows[0].uuid(0)
    }

    public func staff(credentialID: String) async throws -> (staffID: UUID, passkeyID: UUID)? {
        let rows = try await store.client.query(
            "SELECT staff_id, passkey_id FROM staff_passkeys WHERE credential_sha256 = $1",
            [.bytea(AccountState.Passkey.lookupKey(credentialID: credentialID))])
        guard rows.rowCount == 1, let staffID = try rows[0].uuid(0), let passkeyID = try rows[0].uuid(1) else { return nil }
        return (staffID, passkeyID)
    }

    public func session(tokenHash: [UInt8], at time: Date) async throws -> StaffSessionLookup? {
        let rows = try await store.client.query(
            """
            SELECT s.staff_id, s.session_id, t.email_normalized, t.role FROM staff_sessions s JOIN staff t ON t.staff_id = s.staff_id
            WHERE s.token_sha256 = $1 AND s.ended_at IS NULL AND s.expires_at > $2 AND t.removed_at IS NULL
            """, [.bytea(tokenHash), .timestamp(time)])
        guard rows.rowCount == 1, let staffID = try rows[0].uuid(0), let sessionID = try rows[0].uuid(1),
            let email = rows[0].string(2), let role = rows[0].string(3).flatMap(StaffRole.init(rawValue:))
        else { return nil }
        return StaffSessionLookup(staffID: staffID, sessionID: sessionID, email: email, role: role)
    }

    public func all() async throws -> [StaffState] {
        let rows = try await store.client.query("SELECT staff_id FROM staff ORDER BY invited_at, staff_id")
        var states: [StaffState] = []
        for index in 0..<rows.rowCount {
            if let staffID = try rows[index].uuid(0) { states.append(try await load(staffID)) }
        }
        return states
    }
}
