import Foundation

extension AccountCommand {
    /// What a verified assertion reported: the passkey that signed, its counter and backup state.
    public struct PasskeyAssertion: Sendable, Equatable {
        public var passkeyID: UUID
        public var signCount: Int64
        public var backedUp: Bool

        public init(passkeyID: UUID, signCount: Int64, backedUp: Bool) {
            self.passkeyID = passkeyID
            self.signCount = signCount
            self.backedUp = backedUp
        }
    }
}
