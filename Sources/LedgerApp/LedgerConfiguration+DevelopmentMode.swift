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
    /// one machine with nothing configured. Always: it listens on loopback only (codes and links
    /// go to its log; `host` is the `--host` flag, nil when not given) and records its messages
    /// for `ledger dev messages`. With its own local cluster (`localCluster`: no database URL),
    /// also: email links open its own link pages, webhooks may go to a local receiver, and Sign in
    /// with Apple and Google accept the tokens of `ledger dev id-token`; `--dev` on a database of
    /// one's own (a staging copy) keeps those as configured. Whatever the environment sets wins.
    public mutating func applyDevelopmentDefaults(host flag: String?, localCluster: Bool, environment: [String: String]) {
        func isSet(_ name: String) -> Bool {
            !(environment[name]?.trimmingCharacters(in: .whitespaces).isEmpty ?? true)
        }
        developmentMode = true
        host = flag ?? "127.0.0.1"
        developmentMessagesPath = DevelopmentFiles.messages
        guard localCluster else { return }
        if !isSet("LEDGER_LINK_BASE_URL") { linkBaseURL = "http://localhost:\(port)" }
        if !isSet("LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS") { webhookAllowPrivateNetworks = true }
        if appleClientIDs.isEmpty, googleClientIDs.isEmpty {
            appleClientIDs = [DevelopmentFiles.identityClientID]
            googleClientIDs = [DevelopmentFiles.identityClientID]
            appleJWKS = DevelopmentFiles.identityKeySet
            googleJWKS = DevelopmentFiles.identityKeySet
        }
    }

    /// Settings only a deployment has: with any of them set and no database URL, the operator
    /// meant a real database and forgot it, and `serve` refuses rather than start development mode.
    public static let deploymentVariables = [
        "LEDGER_MASTER_KEY", "LEDGER_DELIVERY_WEBHOOK_URL", "LEDGER_SMTP_URL", "LEDGER_TWILIO_ACCOUNT_SID",
        "LEDGER_READ_DATABASE_URL",
    ]

    /// Why `serve` must not fall back to development mode in `environment`, if it must not: a
    /// `DATABASE_URL` set but empty (a template left blank), or a deployment's settings without
    /// a database. `--dev` (`explicitDevelopment`) accepts them.
    public static func developmentFallbackRefusal(environment: [String: String], explicitDevelopment: Bool) -> String? {
        if let url = environment["DATABASE_URL"], url.trimmingCharacters(in: .whitespaces).isEmpty {
            return "DATABASE_URL is set but empty: give the database's URL, or unset it for development mode"
        }
        guard !explicitDevelopment else { return nil }
        let set = deploymentVariables.filter { !(environment[$0]?.trimmingCharacters(in: .whitespaces).isEmpty ?? true) }
        guard !set.isEmpty else { return nil }
        return "DATABASE_URL is not set while a deployment's settings are (\(set.joined(separator: ", "))): set DATABASE_URL "
            + "(development mode on a local cluster starts only without them, or with --dev)"
    }
}
