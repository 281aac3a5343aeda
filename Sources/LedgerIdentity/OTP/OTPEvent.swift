import Foundation

/// The events of one OTP request's stream (`phone.otp_*`). The stream's subject is the
/// account the code is for (or, for a sign-in by a new number, the account it would create),
/// so purging that account shreds the number here too. Codes appear only as keyed hashes.
public enum OTPEvent: Sendable, Equatable {
    case issued(Issued)
    case failed(Failed)
    case verified(Verified)
    case invalidated(Invalidated)
    case cancelled(Cancelled)

    public struct Issued: Codable, Sendable, Equatable {
        public var accountID: UUID
        /// The session that asked; nil for sign-in.
        public var sessionID: UUID?
        public var purpose: OTPPurpose
        public var phone: String
        public var region: String
        /// HMAC-SHA256 (hex) of the code under a key derived from the master key.
        public var codeHash: String
        public var expiresAt: Date
        public var maxAttempts: Int
        enum CodingKeys: String, CodingKey {
            case accountID = "account_id", sessionID = "session_id", purpose, phone, region
            case codeHash = "code_hmac", expiresAt = "expires_at", maxAttempts = "max_attempts"
        }

        public init(
            accountID: UUID, sessionID: UUID?, purpose: OTPPurpose, phone: String, region: String, codeHash: String,
            expiresAt: Date, maxAttempts: Int
        ) {
            self.accountID = accountID
            self.sessionID = sessionID
            self.purpose = purpose
            self.phone = phone
            self.region = region
            self.codeHash = codeHash
            self.expiresAt = expiresAt
            self.maxAttempts = maxAttempts
        }
    }

    public struct Failed: Codable, Sendable, Equatable {
        /// Wrong codes so far, this one included.
        public var attempt: Int
        public var attemptsRemaining: Int
        enum CodingKeys: String, CodingKey { case attempt, attemptsRemaining = "attempts_remaining" }

        public init(attempt: Int, attemptsRemaining: Int) {
            self.attempt = attempt
            self.attemptsRemaining = attemptsRemaining
        }
    }

    public struct Verified: Codable, Sendable, Equatable {
        /// The account the code ended up acting on (sign-in may create it).
        public var accountID: UUID
        enum CodingKeys: String, CodingKey { case accountID = "account_id" }

        public init(accountID: UUID) {
            self.accountID = accountID
        }
    }

    public struct Invalidated: Codable, Sendable, Equatable {
        public enum Reason: String, Codable, Sendable, CaseIterable {
            /// The last allowed wrong code was entered.
            case attemptsExhausted = "attempts_exhausted"
            /// A verification came after the code's lifetime.
            case expired
            /// A newer code was sent for the same number and purpose.
            case superseded
            /// The account it was requested for was deleted: deletion ends every pending code,
            /// so one requested before cannot sign in (or create an account) after.
            case accountDeleted = "account_deleted"
        }
        public var reason: Reason

        public init(reason: Reason) {
            self.reason = reason
        }
    }

    public struct Cancelled: Codable, Sendable, Equatable {
        public init() {}
    }
}

extension OTPEvent {
    public var type: String { kind.rawValue }

    public var schemaVersion: Int { 1 }

    public func encodedPayload() throws -> [UInt8] {
        try AccountEvent.encode(payload: parts.payload).bytes
    }

    /// The payload to store, and the event as reading it back gives it (`AccountEvent.stored()`).
    public func stored() throws -> (payload: [UInt8], event: OTPEvent) {
        let payload = try encodedPayload()
        return (payload, try Self.decode(type: type, schemaVersion: schemaVersion, payload: payload) ?? self)
    }

    /// Reads a stored event; unknown types are nil.
    public static func decode(type: String, schemaVersion: Int, payload: [UInt8]) throws -> OTPEvent? {
        guard let registration = registry[type] else { return nil }
        return try registration.read(payload)
    }
}
