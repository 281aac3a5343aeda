import Foundation

/// `decide` for a link that signs in (docs/accounts.md "Links that sign in"): the confirmation's own
/// events, then, on the state they leave, the sign-in of any other path, so a link never skips
/// the second factor and never signs in where a password could not (a disabled account).
///
/// Only a device the account has already signed in on (its `X-Device-Token`) gets a session:
/// the mailbox a link reaches is not always the account's. Someone who signed up with another
/// person's address, a password of their own, would otherwise have that person signed in to
/// the account they still hold the password of, when the owner opens the verification link;
/// and an email change's link sent to a mistyped address would sign its stranger in. Any other
/// device proves the address and signs in as usual (a password, or "Forgot password", which
/// ends whatever a squatter set up).
func decideLinkSignIn(_ state: AccountState, _ command: AccountCommand, _ context: DecisionContext) throws -> [AccountEvent] {
    guard case .signInByLink(let confirmation, let session) = command else {
        preconditionFailure("decide routes \(command.name) elsewhere")
    }
    switch confirmation {
    case .confirmVerificationLink, .confirmEmailChange, .confirmEmailAdd: break
    default: preconditionFailure("only a link that proves an address signs in, not \(confirmation.name)")
    }
    let confirmed = try decide(state, confirmation, context)
    var after = state
    for event in confirmed { evolve(&after, event, at: context.now) }
    // A disabled account still proves its address, but starts no session (its sign-ins are
    // `403 account_disabled`): the confirmation stands alone.
    guard !after.isDisabled, let email = after.email, after.emailVerified, let deviceID = session.deviceID,
        state.knownDevices.contains(deviceID)
    else { return confirmed }
    return confirmed + (try startSession(after, session, proof: .emailLink(EmailAddress.normalize(email))))
}
