import Foundation

/// The sessions area's events: sign-up, sign-ins, refreshes and sign-outs, failed sign-ins, and the profile.
extension AccountEvent {
    public struct Registered: Codable, Sendable, Equatable {
        public var email: String?
        public var displayName: String?
        public var method: String
        enum CodingKeys: String, CodingKey { case email, displayName = "display_name", method }

        public init(email: String?, displayName: String?, method: String) {
            self.email = email
            self.displayName = displayName
            self.method = method
        }
    }

    public struct SessionStarted: Codable, Sendable, Equatable {
        public var sessionID: UUID
        public var method: String
        public var device: String?
        /// SHA-256 (hex) of the tokens; the tokens themselves exist only in the client.
        public var accessTokenHash: String
        public var refreshTokenHash: String
        public var accessExpiresAt: Date
        public var refreshExpiresAt: Date
        /// The device it came from: the id its `device_token` names.
        public var deviceID: UUID?
        /// The language of the sign-in; the account's messages follow the last one.
        public var locale: String?
        /// The second factor the sign-in passed (`totp`, `recovery_code`); nil when it asked for none.
        public var secondFactor: String?
        enum CodingKeys: String, CodingKey {
            case sessionID = "session_id", method, device
            case accessTokenHash = "access_token_sha256", refreshTokenHash = "refresh_token_sha256"
            case accessExpiresAt = "access_expires_at", refreshExpiresAt = "refresh_expires_at", deviceID = "device_id", locale
            case secondFactor = "second_factor"
        }

        public init(
            sessionID: UUID, method: String, device: String?, accessTokenHash: String, refreshTokenHash: String, accessExpiresAt: Date,
            refreshExpiresAt: Date, deviceID: UUID? = nil, locale: String? = nil, secondFactor: String? = nil
        ) {
            self.secondFactor = secondFactor
            self.locale = locale
            self.deviceID = deviceID
            self.sessionID = sessionID
            self.method = method
            self.device = device
            self.accessTokenHash = accessTokenHash
            self.refreshTokenHash = refreshTokenHash
            self.accessExpiresAt = accessExpiresAt
            self.refreshExpiresAt = refreshExpiresAt
        }
    }

    public struct SessionRefreshed: Codable, Sendable, Equatable {
        public var sessionID: UUID
        public var accessTokenHash: String
        public var refreshTokenHash: String
        public var accessExpiresAt: Date
        public var refreshExpiresAt: Date
        enum CodingKeys: String, CodingKey {
            case sessionID = "session_id"
            case accessTokenHash = "access_token_sha256", refreshTokenHash = "refresh_token_sha256"
            case accessExpiresAt = "access_expires_at", refreshExpiresAt = "refresh_expires_at"
        }

        public init(sessionID: UUID, accessTokenHash: String, refreshTokenHash: String, accessExpiresAt: Date, refreshExpiresAt: Date) {
            self.sessionID = sessionID
            self.accessTokenHash = accessTokenHash
            self.refreshTokenHash = refreshTokenHash
            self.accessExpiresAt = accessExpiresAt
            self.refreshExpiresAt = refreshExpiresAt
        }
    }

    public struct SessionRevoked: Codable, Sendable, Equatable {
        public var sessionID: UUID
        /// `logout`, `revoked_by_user`, `refresh_token_reused`, `password_changed`, `password_reset`.
        public var reason: String
        enum CodingKeys: String, CodingKey { case sessionID = "session_id", reason }

        public init(sessionID: UUID, reason: String) {
            self.sessionID = sessionID
            self.reason = reason
        }
    }

    public struct LoginFailed: Codable, Sendable, Equatable {
        public var failures: Int

        public init(failures: Int) {
            self.failures = failures
        }
    }

    public struct LoginThrottled: Codable, Sendable, Equatable {
        public var until: Date

        public init(until: Date) {
            self.until = until
        }
    }

    public struct HandleClaimed: Codable, Sendable, Equatable {
        public var handle: String
        public var temporary: Bool

        public init(handle: String, temporary: Bool) {
            self.handle = handle
            self.temporary = temporary
        }
    }

    public struct ProfileUpdated: Codable, Sendable, Equatable {
        public var displayName: String?
        enum CodingKeys: String, CodingKey { case displayName = "display_name" }

        public init(displayName: String?) {
            self.displayName = displayName
        }
    }

    /// The language the account's messages are written in, chosen in the profile (nil: back to
    /// the sign-ins' `Accept-Language`).
    public struct LocaleChosen: Codable, Sendable, Equatable {
        public var locale: String?

        public init(locale: String?) {
            self.locale = locale
        }
    }

    /// A sign-in came from a device the account had not used before: its verified address is
    /// told (`new_sign_in`).
    public struct NewDeviceAlerted: Codable, Sendable, Equatable {
        public var sessionID: UUID
        public var device: String
        public var email: String
        enum CodingKeys: String, CodingKey { case sessionID = "session_id", device, email }

        public init(sessionID: UUID, device: String, email: String) {
            self.sessionID = sessionID
            self.device = device
            self.email = email
        }
    }
}

extension AccountEvent {
    /// The sessions area's events in the catalogue (`AccountEvent.registry`): each with its
    /// payload type and the commands whose decision appends it.
    static let sessionsRegistrations: [Registration] = [
        .init(
            .registered, Registered.self, AccountEvent.registered,
            emittedBy: ["register", "registerByPhone", "registerByProvider", "importAccount"]),
        .init(
            .sessionStarted, SessionStarted.self, AccountEvent.sessionStarted,
            emittedBy: ["register", "startSession", "registerByPhone", "registerByProvider", "completeMFAChallenge", "signInWithPasskey"]),
        .init(.sessionRefreshed, SessionRefreshed.self, AccountEvent.sessionRefreshed, emittedBy: ["refreshSession"]),
        .init(
            .sessionRevoked, SessionRevoked.self, AccountEvent.sessionRevoked,
            emittedBy: [
                "refreshSession", "revokeSession", "revokeOtherSessions", "resetPassword", "changePassword", "revertEmail",
                "disableAccount", "handleAppleNotification", "deleteAccount", "support",
            ]),
        .init(.loginFailed, LoginFailed.self, AccountEvent.loginFailed, emittedBy: ["recordLoginFailure"]),
        .init(.loginThrottled, LoginThrottled.self, AccountEvent.loginThrottled, emittedBy: ["recordLoginFailure"]),
        .init(
            .handleClaimed, HandleClaimed.self, AccountEvent.handleClaimed,
            emittedBy: ["register", "updateProfile", "registerByPhone", "registerByProvider", "importAccount"]),
        .init(.profileUpdated, ProfileUpdated.self, AccountEvent.profileUpdated, emittedBy: ["updateProfile"]),
        .init(.localeChosen, LocaleChosen.self, AccountEvent.localeChosen, emittedBy: ["updateProfile"]),
        .init(
            .newDeviceAlerted, NewDeviceAlerted.self, AccountEvent.newDeviceAlerted,
            emittedBy: ["startSession", "completeMFAChallenge", "signInWithPasskey"]),
    ]
}
