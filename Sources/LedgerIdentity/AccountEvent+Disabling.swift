import Foundation

extension AccountEvent {
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
}
