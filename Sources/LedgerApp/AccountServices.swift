import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto
import LedgerIdentity
import LedgerProviders
import LedgerServer

/// The account use cases the routes call, built once from one `AccountsEnvironment` and the
/// stores the environment does not hold (the code requests, the spent passkey challenges):
/// `LedgerServices` builds them on PostgreSQL, the HTTP tests on the in-memory twins.
public struct AccountServices: Sendable {
    /// What every account service works with (the repository, the guards, the policies).
    public let environment: AccountsEnvironment
    public let accounts: AccountService
    public let otp: OTPService
    public let reauth: ReauthService
    public let providers: ProviderService
    public let twoFactor: TwoFactorService
    public let passkeys: PasskeyService
    /// The accounts' pictures and initials tiles.
    public let avatars: AvatarService
    /// Accounts brought from another system (`ledger import`, `POST /admin/accounts/import`).
    public let importer: AccountImporter
    /// The support desk: search, look, fix (`/admin/accounts…`).
    public let desk: SupportDesk
    /// The console's staff, on `LEDGER_CONSOLE_ORIGIN` (nil when no origin can be had).
    public let console: StaffConsole?
    /// The pages behind the email links.
    public let pages: LinkPages
    /// The console's pages.
    public let consolePages: ConsolePages
    /// Apple's and Google's token endpoints; the delivery dispatcher revokes through them.
    public let providerTokens: any ProviderTokenClient

    public init(
        configuration: LedgerConfiguration, environment: AccountsEnvironment, otps: any OTPRepository, spent: any SpentChallenges,
        imports: any AccountImportStore, staff: any StaffRepository, avatars: any AvatarRepository, masterKey: MasterKey,
        clock: any LedgerClock
    ) throws {
        let policies = configuration.policies
        let verifier = JWKSIdentityTokenVerifier(
            apple: .apple(jwks: configuration.appleJWKS, clientIDs: configuration.appleClientIDs),
            google: .google(jwks: configuration.googleJWKS, clientIDs: configuration.googleClientIDs), clock: clock,
            notificationMaxAge: policies.appleNotificationMaxAge)
        self.environment = environment
        self.accounts = AccountService(environment: environment)
        self.otp = OTPService(otps: otps, environment: environment, codeKey: masterKey.derivedKey(label: KeyLabel.otpCode))
        self.reauth = ReauthService(environment: environment)
        let providerTokens = try configuration.providerTokenClient(clock: clock)
        self.providerTokens = providerTokens
        self.providers = ProviderService(
            environment: environment, verifier: verifier,
            linkTokens: ProviderLinkTokens(
                key: masterKey.derivedKey(label: KeyLabel.providerLinkToken), lifetime: policies.providerLinkLifetime),
            notificationVerifier: verifier, tokenClient: providerTokens)
        self.twoFactor = TwoFactorService(environment: environment, providers: providers, issuer: configuration.productName)
        self.passkeys = PasskeyService(
            environment: environment, relyingParty: configuration.relyingParty, relyingPartyName: configuration.relyingPartyName,
            challenges: PasskeyChallenges(masterKey: masterKey), spent: spent)
        self.avatars = AvatarService(
            environment: environment, avatars: avatars, urls: AvatarURLs(base: configuration.accessTokens.issuer))
        self.importer = AccountImporter(store: imports)
        self.desk = SupportDesk(environment: environment)
        self.console = configuration.consoleOrigin.map { origin in
            StaffConsole(
                staff: staff, environment: environment, origin: origin, relyingPartyName: "\(configuration.productName) support",
                masterKey: masterKey, spent: spent)
        }
        self.pages = try LinkPages(product: configuration.productName, apps: configuration.apps)
        self.consolePages = try ConsolePages(product: configuration.productName)
    }
}
