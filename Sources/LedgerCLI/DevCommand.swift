import ArgumentParser
import Foundation
import LedgerAccounts
import LedgerApp
import LedgerIdentity
import LedgerProviders

/// `ledger dev id-token` and `ledger dev apple-notification`: Apple and Google ID tokens, and
/// Apple's server-to-server notifications, for walking the provider flows with curl against a
/// development service (never production).
struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev", abstract: "Development helpers (never for production).",
        subcommands: [IDToken.self, AppleNotification.self, TOTPCode.self, Messages.self, AppendLoadCommand.self])

    struct TOTPCode: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "totp", abstract: "Print the current TOTP code of a secret (what an authenticator app would show).")

        @Option(help: "The base32 secret `POST /me/mfa/totp` answered.") var secret: String

        func run() async throws {
            guard let key = TOTPCodes.secret(fromBase32: secret) else { throw ValidationError("--secret must be the base32 secret") }
            print(TOTPCodes.code(key, step: TOTPCodes.step(at: Date())))
        }
    }

    struct IDToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "id-token",
            abstract: "Print an Apple or Google ID token signed by a local key.",
            discussion: """
                Writes the key to .ledger/dev-idp-key.pem and its JWKS to .ledger/dev-idp-jwks.json on first use.
                Development mode trusts these tokens when no Apple or Google client id is configured; elsewhere, run the
                service with LEDGER_APPLE_JWKS (or LEDGER_GOOGLE_JWKS)=.ledger/dev-idp-jwks.json and
                LEDGER_APPLE_CLIENT_IDS (or LEDGER_GOOGLE_CLIENT_IDS)=ledger-dev.
                """)

        @Option(help: "apple or google.") var provider: String
        @Option(help: "The provider's user id (sub).") var subject: String
        @Option(help: "The address the provider reports.") var email: String?
        @Flag(help: "Say the address is not verified.") var unverifiedEmail = false
        @Option(help: "A nonce to carry.") var nonce: String?

        func run() async throws {
            guard let identityProvider = IdentityProvider(rawValue: provider) else {
                throw ValidationError("--provider must be apple or google")
            }
            let issuer = try DevelopmentIdentityIssuer(keyPath: DevelopmentFiles.identityKey, jwksPath: DevelopmentFiles.identityKeySet)
            print(
                try await issuer.token(
                    provider: identityProvider, subject: subject, email: email, emailVerified: !unverifiedEmail, nonce: nonce))
        }
    }

    struct AppleNotification: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "apple-notification",
            abstract:
                "Print a Sign in with Apple server-to-server notification signed by the local key (the payload for POST /webhooks/apple).",
            discussion: "Uses the key and JWKS of `ledger dev id-token`; run the service as that command says.")

        @Option(help: "consent-revoked, account-delete, email-disabled or email-enabled.") var type: String
        @Option(help: "The Apple user id (sub).") var subject: String
        @Option(help: "The notification's id (jti); a new one by default. The same id twice acts once.") var id: String?

        func run() async throws {
            let issuer = try DevelopmentIdentityIssuer(keyPath: DevelopmentFiles.identityKey, jwksPath: DevelopmentFiles.identityKeySet)
            print(try await issuer.appleNotification(type: type, subject: subject, id: id ?? UUID().uuidString))
        }
    }
}
