import Foundation

/// `decide` for a link that signs in (API.md "links that sign in"): the confirmation's own
/// events, then, on the state they leave, the sign-in of any other path, so a link never skips
/// the second factor and never signs in where a password could not (a disabled account).
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
    guard !after.isDisabled, let email = after.email, after.emailVerified else { return confirmed }
    return confirmed + (try startSession(after, session, proof: .emailLink(EmailAddress.normalize(email))))
}
