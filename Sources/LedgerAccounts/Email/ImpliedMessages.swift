import Foundation
import LedgerCrypto
import LedgerIdentity

/// The messages a command's events imply, written by the repository in the events' transaction
/// beside the ones the command sends: a revoked provider token's revocation
/// (`ProviderTokenRevocations`), the `new_sign_in` email of a sign-in from a new device, and the
/// `two_factor_changed` email when two-step verification is turned on or off or its recovery
/// codes are replaced (each is how a takeover would lock the owner out, or keep a way in), and
/// the `two_factor_limit_reached` email when wrong codes spent a day's limit (someone holds the
/// password or a session), and the `passkey_suspect` alert when a passkey's counter went back
/// (by SMS to an account with no verified email).
public struct ImpliedMessages: Sendable {
    public let revocations: ProviderTokenRevocations

    public init(masterKey: MasterKey) {
        revocations = ProviderTokenRevocations(masterKey: masterKey)
    }

    /// The template of the new sign-in alert.
    public static let newSignInTemplate = "new_sign_in"
    /// The template of the alert that two-step verification changed (`details.change`:
    /// `enabled`, `disabled` or `recovery_codes_regenerated`).
    public static let twoFactorChangedTemplate = "two_factor_changed"
    /// The template of the alert that wrong authenticator codes reached the day's limit
    /// (`details`: `paused_until`, `reached_at`, `during`: `sign_in` or `reauth`).
    public static let twoFactorLimitReachedTemplate = "two_factor_limit_reached"
    /// The template of the alert that a passkey's signature counter did not grow, so it may
    /// have been copied (`details`: `passkey`, its name; `detected_at`).
    public static let passkeySuspectTemplate = "passkey_suspect"
    /// The template of the notice that the support desk changed the account (`details.action`:
    /// `signed_out`, `password_reset_sent`, `two_factor_reset`, `method_removed` with
    /// `details.method`, `disabled`, `enabled`). Neither the operator nor the reason is told:
    /// they are the desk's notes, and a name would help whoever poses as support next.
    public static let changedBySupportTemplate = "changed_by_support"
    /// What every alert tells a person who did not do it.
    public static let secureAccountAdvice =
        "If this wasn't you, change your password and sign out other devices in Settings → Sign-in & security."

    /// The messages `events` imply, from the state before them (`after` folded when not given).
    public func messages(
        for events: [AccountEvent], before state: AccountState, after: AccountState? = nil, at time: Date
    ) throws -> [OutboxMessage] {
        let after = after ?? events.reduce(state) { evolve($0, $1, at: time) }
        return try revocations.messages(for: events, before: state)
            + notices(for: events, before: state, after: after, at: time)
            + supportNotices(for: events, before: state, after: after, at: time)
            + events.compactMap { event -> OutboxMessage? in
                switch event {
                case .newDeviceAlerted(let alert):
                    // Where the sign-in came from is not known here (no address lookup): left out.
                    return Self.alert(
                        to: alert.email, template: Self.newSignInTemplate,
                        details: ["device": alert.device, "signed_in_at": RFC3339.format(time)])
                case .totpEnabled: return twoFactorChanged("enabled", state: state, at: time)
                // A revert or a reset that proved the address turns TOTP off: the person who did
                // it sees so in the answer; the verified address may be the one just restored.
                case .totpDisabled(let disabled) where disabled.reason != nil: return nil
                // Cancelling an enrolment never confirmed turns nothing off.
                case .totpDisabled: return state.isTOTPEnabled ? twoFactorChanged("disabled", state: state, at: time) : nil
                case .recoveryCodesRegenerated: return twoFactorChanged("recovery_codes_regenerated", state: state, at: time)
                case .mfaDailyLimitReached(let reached):
                    return toVerifiedAddress(
                        state, template: Self.twoFactorLimitReachedTemplate,
                        details: [
                            "paused_until": RFC3339.format(reached.until), "reached_at": RFC3339.format(time),
                            "during": reached.sessionID == nil ? "sign_in" : "reauth",
                        ])
                case .passkeySuspect(let suspect):
                    // A clone is told to every owner who can be reached: a phone-only or
                    // passkey-and-phone account by SMS.
                    let details = [
                        "passkey": state.passkeys[suspect.passkeyID]?.name ?? "Passkey", "detected_at": RFC3339.format(time),
                    ]
                    return toOwner(state, template: Self.passkeySuspectTemplate, details: details)
                default: return nil
                }
            }
    }

    /// To the verified address, else by SMS to the phone (an unverified address may not be the
    /// owner's; an account with neither is not told). Nothing of the secret or the codes.
    private func twoFactorChanged(_ change: String, state: AccountState, at time: Date) -> OutboxMessage? {
        toOwner(
            state, template: Self.twoFactorChangedTemplate,
            details: ["change": change, "changed_at": RFC3339.format(time), "method": "totp"])
    }

    /// An alert of a change to how the account is reached: to the verified address, else by SMS
    /// to the phone (a phone-only or passkey-and-phone owner must hear of it too).
    private func toOwner(_ state: AccountState, template: String, details: [String: String]) -> OutboxMessage? {
        toVerifiedAddress(state, template: template, details: details)
            ?? state.phone.map { OutboxMessage(channel: .sms, to: $0, template: template, details: details) }
    }

    /// An alert to the verified address, if there is one.
    private func toVerifiedAddress(_ state: AccountState, template: String, details: [String: String]) -> OutboxMessage? {
        guard let email = state.email, state.emailVerified else { return nil }
        return Self.alert(to: email, template: template, details: details)
    }

    /// An alert email, with what every alert says to a person who did not do it.
    private static func alert(to email: String, template: String, details: [String: String]) -> OutboxMessage {
        OutboxMessage(
            channel: .email, to: email, template: template, details: details.merging(["secure_account": secureAccountAdvice]) { $1 })
    }
}
