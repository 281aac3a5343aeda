import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// Staff in memory, for the console's fast tests: the same `decide` and `evolve` as
/// `PostgresStaffRepository`, its lookups read from the folded states. One actor: each command
/// runs alone, as the stream lock makes it.
public actor InMemoryStaffRepository: StaffRepository {
    private let clock: any LedgerClock
    private var states: [UUID: StaffState] = [:]
    /// The order staff were first invited in.
    private var order: [UUID] = []
    /// The messages commands queued, in order (the outbox).
    public private(set) var outbox: [OutboxMessage] = []
    /// Every event, in the order appended.
    public private(set) var events: [(staffID: UUID, event: StaffEvent)] = []

    public init(clock: any LedgerClock) {
        self.clock = clock
    }

    public func execute(
        _ staffID: UUID, outbox messages: [OutboxMessage], _ command: @Sendable (StaffState) throws -> StaffCommand
    ) async throws -> (StaffState, [StaffEvent]) {
        let now = clock.now()
        let state = states[staffID] ?? StaffState(staffID: staffID)
        let decided = try decide(state, try command(state), now: now)
        guard !decided.isEmpty else { return (state, []) }
        let stored = try decided.map { try $0.stored().event }
        let after = stored.reduce(state) { evolve($0, $1, at: now) }
        if let email = after.email, !after.isRemoved,
            states.values.contains(where: { $0.staffID != staffID && !$0.isRemoved && $0.email?.lowercased() == email.lowercased() })
        {
            throw StaffError(.alreadyStaff, "Someone on staff has this address.")
        }
        if states[staffID] == nil { order.append(staffID) }
        states[staffID] = after
        events += stored.map { (staffID, $0) }
        outbox += messages
        return (after, stored)
    }

    public func load(_ staffID: UUID) async throws -> StaffState { states[staffID] ?? StaffState(staffID: staffID) }

    public func staff(email normalized: String) async throws -> UUID? {
        states.values.first { !$0.isRemoved && $0.email?.lowercased() == normalized }?.staffID
    }

    public func staff(invitationTokenHash: [UInt8]) async throws -> UUID? {
        let hex = Hex.encode(invitationTokenHash)
        return states.values.first { $0.invitation?.tokenHash == hex }?.staffID
    }

    public func staff(credentialID: String) async throws -> (staffID: UUID, passkeyID: UUID)? {
        for state in states.values {
            if let passkey = state.passkey(credentialID: credentialID) { return (state.staffID, passkey.passkeyID) }
        }
        return nil
    }

    public func session(tokenHash: [UInt8], at time: Date) async throws -> StaffSessionLookup? {
        let hex = Hex.encode(tokenHash)
        for state in states.values where !state.isRemoved {
            if let session = state.sessions.values.first(where: { $0.tokenHash == hex && $0.isLive(at: time) }) {
                return StaffSessionLookup(
                    staffID: state.staffID, sessionID: session.id, email: (state.email ?? "").lowercased(), role: state.role)
            }
        }
        return nil
    }

    public func all() async throws -> [StaffState] { order.compactMap { states[$0] } }
}
