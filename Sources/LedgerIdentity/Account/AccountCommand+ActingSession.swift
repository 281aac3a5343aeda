import Foundation

extension AccountCommand {
    /// The signed-in session a command acts for, when it acts for one: `decide` refuses it
    /// (`session_expired`) unless that session is live on the account. A request authenticated
    /// before a revert, a reset or a sign-out everywhere, and decided after it (its body sent
    /// slowly, say), must do nothing: the session it came from has ended.
    public var actingSession: UUID? {
        switch self {
        case .linkPhone(_, _, let sessionID, _), .changePhone(_, _, let sessionID, _), .grantReauth(let sessionID, _, _),
            .issueReauthNonce(let sessionID, _), .sendReauthLink(_, let sessionID), .changePassword(_, let sessionID, _),
            .addEmailAndPassword(_, _, _, let sessionID, _), .requestEmailChange(_, _, let sessionID, _),
            .unlinkProvider(_, let sessionID, _),
            .removePhone(let sessionID, _), .removeEmail(let sessionID, _, _, _), .startTOTPEnrolment(_, let sessionID, _),
            .confirmTOTP(_, _, let sessionID), .disableTOTP(let sessionID, _), .regenerateRecoveryCodes(_, let sessionID, _),
            .grantReauthByTOTP(let sessionID, _, _), .deleteAccount(let sessionID, _, _, _, _), .registerPasskey(_, let sessionID, _),
            .removePasskey(_, let sessionID, _), .grantReauthByPasskey(let sessionID, _, _), .revokeOtherSessions(let sessionID),
            .setAvatar(_, let sessionID), .removeAvatar(let sessionID):
            return sessionID
        case .linkProvider(_, let sessionID, _, _):
            return sessionID
        default:
            return nil
        }
    }
}
