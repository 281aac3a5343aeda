import Foundation

/// One staff member, folded from their stream.
public struct StaffState: Sendable, Equatable {
    public var staffID: UUID
    public var version: Int64 = 0
    public var email: String?
    public var role: StaffRole = .support
    public var invitedAt: Date?
    /// The live invitation's token hash and end; nil once used or replaced by a passkey.
    public var invitation: (tokenHash: String, expiresAt: Date)? {
        get { invitationTokenHash.map { ($0, invitationExpiresAt ?? .distantPast) } }
        set {
            invitationTokenHash = newValue?.tokenHash
            invitationExpiresAt = newValue?.expiresAt
        }
    }
    var invitationTokenHash: String?
    var invitationExpiresAt: Date?
    public var passkeys: [UUID: StaffEvent.PasskeyRegistered] = [:]
    public var sessions: [UUID: Session] = [:]
    public var removedAt: Date?

    /// A console session.
    public struct Session: Sendable, Equatable {
        public var id: UUID
        public var tokenHash: String
        public var startedAt: Date
        public var expiresAt: Date
        public var endedAt: Date?
        /// When the passkey was last shown in it (sign-in, or an admin action's confirmation).
        public var confirmedAt: Date

        public func isLive(at now: Date) -> Bool { endedAt == nil && now < expiresAt }
    }

    public init(staffID: UUID) {
        self.staffID = staffID
    }

    public var exists: Bool { invitedAt != nil }
    public var isRemoved: Bool { removedAt != nil }

    /// The passkey of a credential id, if this staff member registered it.
    public func passkey(credentialID: String) -> StaffEvent.PasskeyRegistered? {
        passkeys.values.first { $0.credentialID == credentialID }
    }

    public static func == (lhs: StaffState, rhs: StaffState) -> Bool {
        lhs.staffID == rhs.staffID && lhs.version == rhs.version && lhs.email == rhs.email && lhs.role == rhs.role
            && lhs.invitedAt == rhs.invitedAt && lhs.invitationTokenHash == rhs.invitationTokenHash
            && lhs.invitationExpiresAt == rhs.invitationExpiresAt && lhs.passkeys == rhs.passkeys && lhs.sessions == rhs.sessions
            && lhs.removedAt == rhs.removedAt
    }
}
