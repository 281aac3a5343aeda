import LedgerPostgres
import LedgerServer

extension ServeAssembly {
    /// What `serve` refuses before it touches anything: outside development mode, codes and
    /// links with no way out (they would go to the log: a leak of every sign-in code), and
    /// provider token endpoints over plain HTTP off this host (client secrets and refresh
    /// tokens cross them). `development` allows both. And never a multi-host `DATABASE_URL` that
    /// may settle on a standby.
    public static func check(_ configuration: LedgerConfiguration, development: Bool) throws {
        guard development || (configuration.emailsHaveAWayOut && configuration.textsHaveAWayOut) else {
            let missing = [
                configuration.emailsHaveAWayOut ? nil : "emails (set LEDGER_SMTP_URL or LEDGER_DELIVERY_WEBHOOK_URL)",
                configuration.textsHaveAWayOut ? nil : "texts (set LEDGER_TWILIO_* or LEDGER_DELIVERY_WEBHOOK_URL)",
            ].compactMap { $0 }
            throw ConfigurationError(
                "refusing to start: no way out for \(missing.joined(separator: " or ")); outside development mode (--dev) "
                    + "codes and links never go to a log")
        }
        // Several hosts and `any`: libpq would settle on whichever answers first, a standby too,
        // and every write would fail there (docs/operations.md "High availability on Patroni").
        if let url = configuration.databaseURL.map(ConnectionTarget.requiringPrimary), let target = ConnectionTarget(url: url),
            !target.settlesOnPrimary
        {
            throw ConfigurationError(
                "refusing to start: DATABASE_URL names \(target.hosts.count) hosts with target_session_attrs=\(target.sessionAttributes); "
                    + "use target_session_attrs=read-write (the default serve applies) so only the primary is used")
        }
        // Loopback stays on this host (a local proxy, or a test's fake provider).
        for (_, url) in configuration.providerEndpoints where !development && !LedgerConfiguration.isPrivateToHost(url) {
            throw ConfigurationError(
                "refusing to start: provider token endpoints must be https (or http on loopback) outside development mode (\(url))")
        }
    }
}
