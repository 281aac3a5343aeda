import Foundation

/// What can happen to a staff member (docs/support.md "The console").
public enum StaffCommand: Sendable, Equatable {
    /// Invites (or invites again) a person by address and role; the link's token by hash.
    case invite(email: String, role: StaffRole, invitationTokenHash: String, expiresAt: Date)
    /// Registers the passkey of a registration answering the invitation (its token by hash).
    case registerPasskey(StaffEvent.PasskeyRegistered, invitationTokenHash: String)
    /// Starts a console session by a verified assertion of the staff member's passkey.
    case signIn(passkeyID: UUID, signCount: Int64, session: NewSession)
    /// The passkey shown again in a live session, for an `admin`-role action.
    case confirmPasskey(passkeyID: UUID, signCount: Int64, sessionID: UUID)
    case signOut(sessionID: UUID)
    /// Removes the staff member: every session ends at once.
    case remove

    /// A console session to start: its id, its cookie token's hash and its end.
    public struct NewSession: Sendable, Equatable {
        public var sessionID: UUID
        public var tokenHash: String
        public var expiresAt: Date

        public init(sessionID: UUID, tokenHash: String, expiresAt: Date) {
            self.sessionID = sessionID
            self.tokenHash = tokenHash
            self.expiresAt = expiresAt
        }
    }

    /// The command's case name, as the catalogue's `emittedBy` lists it.
    public var name: String { Mirror(reflecting: self).children.first?.label ?? String(describing: self) }
}

/// Why a staff command is refused. Every refusal of a passkey or a link looks alike to the
/// person at the console: which check failed is for the log.
public struct StaffError: Error, Sendable, Equatable {
    public struct Code: Hashable, Sendable {
        public let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        /// An address already on staff with a passkey (`ledger staff add` of someone who signs in already).
        public static let alreadyStaff = Code("already_staff")
        public static let noStaff = Code("no_staff")
        /// An invitation unknown, used, replaced or past its 24 hours.
        public static let invitationExpired = Code("invitation_expired")
        /// A passkey that is not this staff member's, or whose counter went back.
        public static let invalidCredential = Code("invalid_credential")
        /// A session ended, expired, or of a removed staff member.
        public static let sessionEnded = Code("session_ended")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public static let invitationExpired = StaffError(.invitationExpired, "This invitation has expired. Ask for a new one.")
    public static let invalidCredential = StaffError(.invalidCredential, "This passkey could not be verified. Try again.")
    public static let sessionEnded = StaffError(.sessionEnded, "Your console session has ended. Sign in again.")
}
