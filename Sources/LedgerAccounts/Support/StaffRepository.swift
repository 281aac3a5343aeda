import Foundation
import LedgerIdentity

/// Where staff live (docs/support.md "The console"): a stream each, and the lookups a console
/// request needs. `PostgresStaffRepository` in production, `InMemoryStaffRepository` in tests.
public protocol StaffRepository: Sendable {
    /// Runs a command against a staff member in one transaction: lock their stream, fold it,
    /// `decide`, append, update the lookups, and queue `outbox` when events were appended.
    func execute(
        _ staffID: UUID, outbox: [OutboxMessage], _ command: @Sendable (StaffState) throws -> StaffCommand
    ) async throws -> (StaffState, [StaffEvent])
    /// A staff member's state (empty when there is none).
    func load(_ staffID: UUID) async throws -> StaffState
    /// The staff member (not removed) with this address, lower-cased.
    func staff(email normalized: String) async throws -> UUID?
    /// The staff member whose live invitation has this token (by SHA-256).
    func staff(invitationTokenHash: [UInt8]) async throws -> UUID?
    /// The staff member and passkey of a credential id (base64url).
    func staff(credentialID: String) async throws -> (staffID: UUID, passkeyID: UUID)?
    /// The live console session of a cookie token (by SHA-256) at `time`, of a staff member not
    /// removed, with their address and role.
    func session(tokenHash: [UInt8], at time: Date) async throws -> StaffSessionLookup?
    /// Every staff member, removed ones included, in the order they were invited.
    func all() async throws -> [StaffState]
}

extension StaffRepository {
    public func execute(
        _ staffID: UUID, _ command: @Sendable (StaffState) throws -> StaffCommand
    ) async throws -> (StaffState, [StaffEvent]) {
        try await execute(staffID, outbox: [], command)
    }
}

/// A live console session as one lookup finds it.
public struct StaffSessionLookup: Sendable, Equatable {
    public let staffID: UUID
    public let sessionID: UUID
    public let email: String
    public let role: StaffRole

    public init(staffID: UUID, sessionID: UUID, email: String, role: StaffRole) {
        self.staffID = staffID
        self.sessionID = sessionID
        self.email = email
        self.role = role
    }
}
