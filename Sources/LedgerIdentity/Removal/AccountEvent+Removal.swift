import Foundation

/// The removal area's events: disabling, holds, deletion and the purge.
extension AccountEvent {
    /// A deletion was asked for but holds block it: the purge worker schedules it once they
    /// have lapsed or been released.
    public struct DeletionRequested: Codable, Sendable, Equatable {
        /// Who asked: `apple` (its account-delete notification).
        public var by: String
        /// The kinds of hold that blocked it then.
        public var blockedBy: [HoldKind]
        enum CodingKeys: String, CodingKey { case by, blockedBy = "blocked_by" }

        public init(by: String, blockedBy: [HoldKind]) {
            self.by = by
            self.blockedBy = blockedBy
        }
    }

    /// The account is deleted: signed out everywhere, purged after `purge_after`, and its
    /// identifiers (as keyed hashes) may not register again before `cooldown_until`.
    public struct DeletionScheduled: Codable, Sendable, Equatable {
        public var purgeAfter: Date
        public var cooldownUntil: Date
        /// HMAC-SHA256 (hex) of `email:…`, `phone:…`, `apple:…`, `google:…`.
        public var cooldownKeys: [String]
        enum CodingKeys: String, CodingKey {
            case purgeAfter = "purge_after", cooldownUntil = "cooldown_until", cooldownKeys = "cooldown_keys"
        }

        public init(purgeAfter: Date, cooldownUntil: Date, cooldownKeys: [String]) {
            self.purgeAfter = purgeAfter
            self.cooldownUntil = cooldownUntil
            self.cooldownKeys = cooldownKeys
        }
    }

    /// The account's data key was destroyed and its personal data removed from every
    /// projection. Written unencrypted and without personal data, so it stays readable.
    public struct Purged: Codable, Sendable, Equatable {
        /// The deletion this purge completes.
        public var deletedAt: Date?
        enum CodingKeys: String, CodingKey { case deletedAt = "deleted_at" }

        public init(deletedAt: Date?) {
            self.deletedAt = deletedAt
        }
    }

    public struct HoldReleased: Codable, Sendable, Equatable {
        public var ref: String
        /// The API key that released it (the one that placed it, or an administrator's).
        public var keyID: String?
        enum CodingKeys: String, CodingKey { case ref, keyID = "key_id" }

        public init(ref: String, keyID: String? = nil) {
            self.ref = ref
            self.keyID = keyID
        }
    }

    /// A session or booking hold ended on its own when it started (appended by the service,
    /// so consumers see the hold go as they saw it come).
    public struct HoldLapsed: Codable, Sendable, Equatable {
        public var ref: String
        public var startsAt: Date?
        enum CodingKeys: String, CodingKey { case ref, startsAt = "starts_at" }

        public init(ref: String, startsAt: Date?) {
            self.ref = ref
            self.startsAt = startsAt
        }
    }

    /// An operator disabled the account; the event's metadata names the API key (`actor`).
    public struct AccountDisabled: Codable, Sendable, Equatable {
        public var reason: String

        public init(reason: String) {
            self.reason = reason
        }
    }

    /// An operator enabled the account again.
    public struct AccountEnabled: Codable, Sendable, Equatable {
        public init() {}
    }
}

extension AccountEvent {
    /// The removal area's events in the catalogue (`AccountEvent.registry`): each with its
    /// payload type and the commands whose decision appends it.
    static let removalRegistrations: [Registration] = [
        .init(
            .accountDisabled, AccountDisabled.self, AccountEvent.accountDisabled,
            emittedBy: ["disableAccount", "handleAppleNotification", "importAccount", "support"]),
        .init(.accountEnabled, AccountEnabled.self, AccountEvent.accountEnabled, emittedBy: ["enableAccount", "support"]),
        .init(.deletionRequested, DeletionRequested.self, AccountEvent.deletionRequested, emittedBy: ["handleAppleNotification"]),
        .init(.holdPlaced, Hold.self, AccountEvent.holdPlaced, emittedBy: ["placeHold"]),
        .init(.holdReleased, HoldReleased.self, AccountEvent.holdReleased, emittedBy: ["releaseHold"]),
        .init(.holdLapsed, HoldLapsed.self, AccountEvent.holdLapsed, emittedBy: ["lapseHolds"]),
        .init(
            .deletionScheduled, DeletionScheduled.self, AccountEvent.deletionScheduled,
            emittedBy: ["deleteAccount", "handleAppleNotification", "completeRequestedDeletion"]),
        // Appended by the purge worker, not by a command.
        .init(.purged, Purged.self, AccountEvent.purged, emittedBy: []),
    ]
}
