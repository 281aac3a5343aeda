import Foundation
import LedgerCrypto
import LedgerIdentity

/// The messages a command's events imply, written by the repository in the events' transaction
/// beside the ones the command sends: a revoked provider token's revocation
/// (`ProviderTokenRevocations`), and the `new_sign_in` email of a sign-in from a new device.
public struct ImpliedMessages: Sendable {
    public let revocations: ProviderTokenRevocations

    public init(masterKey: MasterKey) {
        revocations = ProviderTokenRevocations(masterKey: masterKey)
    }

    /// The template of the new sign-in alert.
    public static let newSignInTemplate = "new_sign_in"

    public func messages(for events: [AccountEvent], before state: AccountState, at time: Date) throws -> [OutboxMessage] {
        try revocations.messages(for: events, before: state)
            + events.compactMap { event in
                guard case .newDeviceAlerted(let alert) = event else { return nil }
                // Where the sign-in came from is not known here (no address lookup): left out.
                return OutboxMessage(
                    channel: .email, to: alert.email, template: Self.newSignInTemplate,
                    details: [
                        "device": alert.device, "signed_in_at": RFC3339.format(time),
                        "secure_account":
                            "If this wasn't you, change your password and sign out other devices in Settings → Sign-in & security.",
                    ])
            }
    }
}
