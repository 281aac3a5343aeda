import Foundation

/// `decide` for an account brought from another system: `account.imported`, then the events
/// its facts mean, as if it had signed up here. No session starts and no message is sent.
func decideImport(_ state: AccountState, _ command: AccountCommand, _ context: DecisionContext) throws -> [AccountEvent] {
    guard case .importAccount(let account) = command else { preconditionFailure("decide routes \(command.name) elsewhere") }
    guard !state.exists else { throw IdentityError(.accountExists, "This account already exists.") }
    guard account.hasSignInMethod else { throw IdentityError.importWithoutSignInMethod }
    var events: [AccountEvent] = [
        .imported(.init(source: account.source, externalID: account.externalID, createdAt: account.createdAt)),
        .registered(.init(email: account.email?.value, displayName: account.displayName, method: "import")),
    ]
    if let passwordHash = account.passwordHash { events.append(.passwordSet(.init(passwordHash: passwordHash, reason: .imported))) }
    if let email = account.email, account.emailVerified { events.append(.emailVerified(.init(email: email.value, via: "import"))) }
    if let phone = account.phone { events.append(.phoneLinked(.init(phone: phone.e164, region: phone.region, requestID: nil))) }
    events += account.providers.map { providerLinked($0) }
    events.append(.handleClaimed(.init(handle: account.handle.value, temporary: true)))
    if account.disabled { events.append(.accountDisabled(.init(reason: "imported_disabled"))) }
    return events
}

extension IdentityError {
    /// An imported record with no address, number or provider: nobody could ever sign in to it.
    public static let importWithoutSignInMethod = IdentityError(
        .invalidRecord, "The record has no email, phone number or Apple or Google identity.")
}

extension IdentityError.Code {
    /// An imported record that cannot become an account (`invalid_record`).
    public static let invalidRecord = Self("invalid_record")
}
