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
}
