import Foundation
import LedgerIdentity

extension AccountService {
    /// What a link that proves an address did: the account after it and, when the device that
    /// opened it asked to sign in, that sign-in's outcome (nil for a device the account does not
    /// know, or a disabled account: either proves the address but starts no session).
    public struct ConfirmedLink: Sendable {
        public let state: AccountState
        public let signIn: LinkSignIn?
    }

    /// A link's sign-in: a session, or the second factor's challenge when two-factor is on.
    public enum LinkSignIn: Sendable {
        case session(Session)
        case secondFactor(MFARequired)
    }

    /// Runs a link's `confirmation`, and with a `device`, in the same decision, the sign-in
    /// it earns (`AccountCommand.signInByLink`): the link is spent once, by one request, and
    /// its session starts only on the state the confirmation left.
    func confirm(
        _ accountID: UUID, outbox: [OutboxMessage] = [], signingIn device: SignInDevice?, _ confirmation: AccountCommand
    ) async throws -> ConfirmedLink {
        guard let device else {
            return ConfirmedLink(state: try await repository.execute(accountID, outbox: outbox) { _ in confirmation }.0, signIn: nil)
        }
        let pending = try await environment.pendingSignIn(linkToken: nil)
        let session = pending.newSession(
            method: ReauthMethod.emailLink.rawValue, device: device.label,
            deviceID: environment.deviceID(presented: device.token, of: accountID),
            locale: device.locale)
        let (state, events) = try await repository.execute(accountID, outbox: outbox) { _ in .signInByLink(confirmation, session) }
        let started = events.contains { if case .sessionStarted = $0 { true } else { false } }
        guard started || PendingSignIn.isChallenged(events) else { return ConfirmedLink(state: state, signIn: nil) }
        do {
            return ConfirmedLink(state: state, signIn: .session(try await pending.session(state, events, environment: environment)))
        } catch let required as MFARequired {
            return ConfirmedLink(state: state, signIn: .secondFactor(required))
        }
    }
}
