import ArgumentParser
import Foundation
import LedgerIdentity
import LedgerProviders

/// `ledger dev id-token`: Apple and Google ID tokens for walking the provider flows with curl
/// against a development service (never production).
struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev", abstract: "Development helpers (never for production).", subcommands: [IDToken.self, AppendLoadCommand.self])

    struct IDToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "id-token",
            abstract: "Print an Apple or Google ID token signed by a local key.",
            discussion: """
                Writes the key to .ledger/dev-idp-key.pem and its JWKS to .ledger/dev-idp-jwks.json on first use.
                Run the service with LEDGER_APPLE_JWKS (or LEDGER_GOOGLE_JWKS)=.ledger/dev-idp-jwks.json and
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
            let issuer = try DevelopmentIdentityIssuer(keyPath: ".ledger/dev-idp-key.pem", jwksPath: ".ledger/dev-idp-jwks.json")
            print(
                try await issuer.token(
                    provider: identityProvider, subject: subject, email: email, emailVerified: !unverifiedEmail, nonce: nonce))
        }
    }
}
