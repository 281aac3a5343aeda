import Foundation

/// Where development mode keeps what it makes, beside the working directory: all of it under
/// `.ledger/` (ignored by git), so `./scripts/run.sh --reset` or deleting the folder starts afresh.
public enum DevelopmentFiles {
    /// The local PostgreSQL cluster of the development setup (no `DATABASE_URL`), kept between runs.
    public static let cluster = ".ledger/dev-cluster"
    /// The development master key (`MasterKeySource`).
    public static let masterKey = ".ledger/dev-master-key"
    /// Every email and text the log sink sent, one JSON object a line (`ledger dev messages` reads it).
    public static let messages = ".ledger/dev-messages.jsonl"
    /// `DATABASE_URL=…` of the running development setup, for `scripts/ledger`.
    public static let environment = ".ledger/dev.env"
    /// The development identity provider's key and key set (`ledger dev id-token`).
    public static let identityKey = ".ledger/dev-idp-key.pem"
    public static let identityKeySet = ".ledger/dev-idp-jwks.json"
    /// The audience `ledger dev id-token` signs for.
    public static let identityClientID = "ledger-dev"
}

extension LedgerConfiguration {
    /// Development mode's defaults for what `environment` leaves unset, so a first run works on
    /// one machine with nothing configured: it listens on loopback only (codes and links go to
    /// its log), its email links open its own link pages, webhooks may go to a local receiver,
    /// and Sign in with Apple and Google accept the tokens of `ledger dev id-token`. Whatever the
    /// environment sets wins. `host` is the `--host` flag, nil when not given.
    public mutating func applyDevelopmentDefaults(host flag: String?, environment: [String: String]) {
        func isSet(_ name: String) -> Bool {
            !(environment[name]?.trimmingCharacters(in: .whitespaces).isEmpty ?? true)
        }
        developmentMode = true
        host = flag ?? "127.0.0.1"
        if !isSet("LEDGER_LINK_BASE_URL") { linkBaseURL = "http://localhost:\(port)" }
        if !isSet("LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS") { webhookAllowPrivateNetworks = true }
        if appleClientIDs.isEmpty, googleClientIDs.isEmpty {
            appleClientIDs = [DevelopmentFiles.identityClientID]
            googleClientIDs = [DevelopmentFiles.identityClientID]
            appleJWKS = DevelopmentFiles.identityKeySet
            googleJWKS = DevelopmentFiles.identityKeySet
        }
        developmentMessagesPath = DevelopmentFiles.messages
    }
}
