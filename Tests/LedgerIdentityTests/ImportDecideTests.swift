import Foundation
import LedgerIdentity
import Testing

@Suite("decide: accounts imported from another system")
struct ImportDecideTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let bcrypt = "$2b$04$TYwpxbNzovNvGQ4hArl3N.jc9dD9L8iS59/XL2RiuzfLY0eokIuba"

    func imported(
        email: String? = "ana@example.org", verified: Bool = true, phone: PhoneNumber? = nil,
        providers: [AccountCommand.ProviderIdentityClaim] = [], passwordHash: String? = nil, disabled: Bool = false
    ) -> AccountCommand.ImportedAccount {
        .init(
            source: "firebase", externalID: "fb-1", createdAt: Date(timeIntervalSince1970: 1_609_459_200),
            email: email.flatMap(EmailAddress.init),
            emailVerified: verified, phone: phone, displayName: "Ana", passwordHash: passwordHash, providers: providers,
            handle: Handle("user_000777")!, disabled: disabled)
    }

    @Test("an import appends account.imported, then what its facts mean: address, password, phone, providers, handle, disabled")
    func importsEveryFact() throws {
        let account = imported(
            phone: PhoneNumber(e164: "+995599123456", region: "GE"),
            providers: [.init(provider: .google, subject: "g-1", email: "ana@example.org", emailVerified: false)],
            passwordHash: bcrypt, disabled: true)
        let events = try decide(AccountState(accountID: UUID()), .importAccount(account), now: now)
        #expect(
            events.map(\.type) == [
                "account.imported", "account.registered", "password.set", "email.verified", "phone.linked", "provider.linked",
                "handle.claimed", "account.disabled",
            ])
        guard case .imported(let payload) = events[0] else { throw Failure("account.imported first") }
        #expect(payload.source == "firebase" && payload.externalID == "fb-1" && payload.createdAt == account.createdAt)
        guard case .passwordSet(let password) = events[2] else { throw Failure("password.set") }
        #expect(password.passwordHash == bcrypt && password.reason == .imported)
        let state = events.reduce(AccountState(accountID: UUID())) { evolve($0, $1, at: now) }
        #expect(state.exists && state.emailVerified && state.passwordHash == bcrypt && state.phone == "+995599123456")
        #expect(state.providerSubjects[.google] == "g-1" && state.isDisabled && state.handleIsTemporary)
        #expect(state.sessions.isEmpty && state.pendingLinks.isEmpty, "an import starts no session and sends no link")
    }

    @Test("an unverified address is kept unverified, and no password means no password.set")
    func unverifiedWithoutPassword() throws {
        let events = try decide(AccountState(accountID: UUID()), .importAccount(imported(verified: false)), now: now)
        #expect(events.map(\.type) == ["account.imported", "account.registered", "handle.claimed"])
    }

    @Test("an import never lands on an existing account, and a record with no way in is refused")
    func refusals() throws {
        let state = try decide(AccountState(accountID: UUID()), .importAccount(imported()), now: now)
            .reduce(AccountState(accountID: UUID())) { evolve($0, $1, at: now) }
        #expect(throws: IdentityError.self) { try decide(state, .importAccount(imported()), now: now) }
        #expect(throws: IdentityError.importWithoutSignInMethod) {
            try decide(AccountState(accountID: UUID()), .importAccount(imported(email: nil)), now: now)
        }
    }

    @Test("a sign-in's rehash of another system's hash is password.rehashed; of a weaker scrypt, password.set (rehash)")
    func rehash() throws {
        let state = try decide(AccountState(accountID: UUID()), .importAccount(imported(passwordHash: bcrypt)), now: now)
            .reduce(AccountState(accountID: UUID())) { evolve($0, $1, at: now) }
        let native = "$scrypt$ln=17,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g"
        let events = try decide(state, .rehashPassword(replacing: bcrypt, newPasswordHash: native), now: now)
        #expect(events == [.passwordRehashed(.init(passwordHash: native, replacedForm: "bcrypt"))])
        let after = events.reduce(state) { evolve($0, $1, at: now) }
        #expect(after.passwordHash == native && after.passwordChangedAt == state.passwordChangedAt)
        // The hash changed meanwhile (a reset): the rehash of the old one changes nothing.
        #expect(try decide(after, .rehashPassword(replacing: bcrypt, newPasswordHash: "other"), now: now).isEmpty)
        let weaker = "$scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g"
        let upgraded = try decide(
            evolve(after, .passwordSet(.init(passwordHash: weaker, reason: .reset)), at: now),
            .rehashPassword(replacing: weaker, newPasswordHash: native), now: now)
        #expect(upgraded == [.passwordSet(.init(passwordHash: native, reason: .rehash))])
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
