import Foundation

/// The support desk's records: who looked at the account or changed it, and why.
extension AccountEvent {
    /// One support call on the account (`admin.viewed`, `admin.signed_out`, …): the key or
    /// staff member, the operator, and the reason of a change. The effects of a change follow it
    /// in the same commit as their own events (`session.revoked`, `account.disabled`, …).
    public struct AdminRecord: Codable, Sendable, Equatable {
        /// Which `admin.*` event it is.
        public enum Action: String, Sendable, CaseIterable {
            case viewed, signedOut = "signed_out", passwordResetSent = "password_reset_sent", twoFactorReset = "two_factor_reset"
            case methodRemoved = "method_removed", disabled, enabled

            /// Its stored event type.
            public var kind: Kind {
                switch self {
                case .viewed: .adminViewed
                case .signedOut: .adminSignedOut
                case .passwordResetSent: .adminPasswordResetSent
                case .twoFactorReset: .adminTwoFactorReset
                case .methodRemoved: .adminMethodRemoved
                case .disabled: .adminDisabled
                case .enabled: .adminEnabled
                }
            }
        }

        /// What a look saw.
        public enum View: String, Codable, Sendable, CaseIterable {
            case summary, sessions
            /// A search matched the account (the search's terms are not kept).
            case search
        }

        /// The API key that made the call (`key_id`), or the console's staff member (`staff_id`).
        public var keyID: UUID?
        public var staffID: UUID?
        /// Who acted, as the call named them (`X-Ledger-Operator`, or the staff member's address).
        public var operatorName: String
        /// Why, for a change.
        public var reason: String?
        /// For `admin.viewed`: what was looked at.
        public var view: View?
        /// For `admin.method_removed`: `phone`, `email`, `apple`, `google` or `passkey`, and the passkey's id.
        public var method: String?
        public var passkeyID: UUID?
        enum CodingKeys: String, CodingKey {
            case keyID = "key_id", staffID = "staff_id", operatorName = "operator", reason, view, method, passkeyID = "passkey_id"
        }

        public init(
            keyID: UUID? = nil, staffID: UUID? = nil, operatorName: String, reason: String? = nil, view: View? = nil,
            method: String? = nil, passkeyID: UUID? = nil
        ) {
            self.keyID = keyID
            self.staffID = staffID
            self.operatorName = operatorName
            self.reason = reason
            self.view = view
            self.method = method
            self.passkeyID = passkeyID
        }
    }
}

extension AccountEvent {
    /// The support area's events in the catalogue (`AccountEvent.registry`).
    static let supportRegistrations: [Registration] = AdminRecord.Action.allCases.map { action in
        .init(action.kind, AdminRecord.self, { AccountEvent.admin(action, $0) }, emittedBy: ["support"])
    }
}
