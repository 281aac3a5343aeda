import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto
import LedgerIdentity
import LedgerTestSupport
import LedgerWebAuthn
import Testing

/// The use cases over the in-memory repository and counters, with a clock the tests move: the
/// application rules tested without a database.
struct InMemoryAccounts {
    static let password = "violet-harbor-91"

    let clock = ManualClock()
    let repository: InMemoryAccountRepository
    let accounts: AccountService
    let providers: ProviderService
    let reauth: ReauthService
    let otp: OTPService
    let twoFactor: TwoFactorService
    /// Passkeys for the relying party `localhost` at `http://localhost:8080`.
    let passkeys: PasskeyService
    let verifier = FakeIdentityVerifier()
    let providerTokens = FakeProviderTokens()

    init(policies: Policies = .standard) throws {
        repository = try InMemoryAccountRepository(clock: clock, policies: policies)
        let environment = try AccountsEnvironment.testing(repository, clock: clock)
        accounts = AccountService(environment: environment)
        providers = ProviderService(
            environment: environment, verifier: verifier,
            linkTokens: ProviderLinkTokens(key: Array(repeating: 7, count: 32), lifetime: Policies.standard.providerLinkLifetime),
            tokenClient: providerTokens)
        reauth = ReauthService(environment: environment)
        otp = OTPService(
            otps: InMemoryOTPRepository(accounts: repository, clock: clock), environment: environment,
            codeKey: Array(repeating: 5, count: 32))
        twoFactor = TwoFactorService(environment: environment, providers: providers)
        passkeys = PasskeyService(
            environment: environment, relyingParty: RelyingParty(id: "localhost", origins: ["http://localhost:8080"]),
            relyingPartyName: "321Fit", challenges: PasskeyChallenges(key: Array(repeating: 9, count: 32)),
            spent: InMemorySpentChallenges())
    }

    /// A new email-and-password account, signed in; `verified`: its address proved by the
    /// emailed link (a password grant serves `add_method` only then).
    func signUp(_ email: String = newEmail(), verified: Bool = false) async throws -> SessionRef {
        let session = ref(try await signedUp(email))
        if verified { _ = try await accounts.verifyEmail(token: try await lastEmailToken()) }
        return session
    }

    /// A new account's session, with its tokens.
    func signedUp(_ email: String = newEmail()) async throws -> AccountService.Session {
        try await accounts.signUp(email: email, password: Self.password, displayName: nil, handle: nil, device: "test")
    }

    /// Another session on the account of `email`, with its tokens.
    func signedIn(_ email: String) async throws -> AccountService.Session {
        try await accounts.signIn(email: email, password: Self.password, device: "test")
    }

    /// A second session on the same account.
    func signIn(_ email: String) async throws -> SessionRef {
        ref(try await signedIn(email))
    }

    static func newEmail() -> String { "\(UUID().uuidString.prefix(8).lowercased())@example.com" }

    /// A "Verify it's you" grant for `session`, by its password.
    func passwordGrant(_ session: SessionRef) async throws -> String {
        try await reauth.withPassword(session, password: Self.password, client: nil).token
    }

    /// The code of the newest text to `phone`, as its recipient would read it.
    func lastCode(to phone: String) async throws -> String {
        try #require(await repository.outbox.last(where: { $0.channel == .sms && $0.to == phone })?.code)
    }

    /// The token of the newest email message, as its recipient would read it from the link.
    func lastEmailToken() async throws -> String {
        try #require(await repository.outbox.last(where: { $0.channel == .email })?.token)
    }

    func ref(_ session: AccountService.Session) -> SessionRef {
        SessionRef(accountID: session.accountID, sessionID: session.sessionID)
    }
}

/// Apple and Google in a test: an ID token here is `provider|subject|email|verified`, and it
/// verifies as what it says (the real verifier's checks have their own tests).
struct FakeIdentityVerifier: IdentityTokenVerifier {
    static func token(_ provider: IdentityProvider, subject: String, email: String? = nil, verified: Bool = true) -> String {
        [provider.rawValue, subject, email ?? "", verified ? "1" : "0"].joined(separator: "|")
    }

    func verify(_ idToken: String, provider: IdentityProvider, nonce: String?) async throws -> ProviderIdentity {
        let parts = idToken.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, parts[0] == provider.rawValue else { throw InvalidIdentityToken("not a token for \(provider.rawValue)") }
        return ProviderIdentity(
            provider: provider, subject: parts[1], email: parts[2].isEmpty ? nil : parts[2], emailVerified: parts[3] == "1",
            isPrivateRelay: false, nonce: nonce, audience: FakeProviderTokens.clientID)
    }
}

/// The providers' token endpoints in a test: the code `code:SUBJECT` is exchanged for
/// `refresh:SUBJECT`; any other code is refused. Revocations are recorded.
final class FakeProviderTokens: ProviderTokenClient, @unchecked Sendable {
    static let clientID = "test-app"
    private let lock = NSLock()
    private var revoked: [String] = []
    var revokedTokens: [String] { lock.withLock { revoked } }

    func canExchange(_ provider: IdentityProvider) -> Bool { true }

    func exchange(code: String, provider: IdentityProvider, clientID: String, subject: String) async throws -> String {
        guard code == "code:\(subject)", clientID == Self.clientID else { throw ProviderTokenError(.rejected, provider, "unknown code") }
        return "refresh:\(subject)"
    }

    func revoke(refreshToken: String, provider: IdentityProvider, clientID: String) async throws {
        lock.withLock { revoked.append(refreshToken) }
    }
}

/// Expects `body` to throw an `IdentityError` with `code`.
func expectIdentityError<T>(_ code: IdentityError.Code, _ body: () async throws -> T) async {
    do {
        _ = try await body()
        Issue.record("expected \(code.rawValue), nothing was thrown")
    } catch let error as IdentityError {
        #expect(error.code == code)
    } catch {
        Issue.record("expected \(code.rawValue), got \(error)")
    }
}
