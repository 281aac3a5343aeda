import ArgumentParser
import Foundation
import LedgerAccounts
import LedgerApp
import LedgerCore
import LedgerCrypto
import LedgerDelivery
import LedgerEventStore
import LedgerPostgres
import LedgerServer
import LedgerWorkers
import Logging
import ServiceLifecycle

/// `ledger serve`: the HTTP service. Without a database URL it runs a throwaway local
/// PostgreSQL cluster and a development master key, and says so; `--dev` uses the development
/// key (and migrates) against a database of your own.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the HTTP service.")

    @OptionGroup var database: DatabaseOptions

    @Option(help: "HTTP port (default: $LEDGER_PORT or 8080).")
    var port: Int?

    @Option(help: "Address to listen on.")
    var host: String = "0.0.0.0"

    @Flag(
        inversion: .prefixedNo,
        help: ArgumentHelp(
            "Run the purge and the retention sweep here, on one instance at a time (the default); --no-purge leaves them to "
                + "another process. --purge, once the way to turn them on, is still accepted and changes nothing."))
    var purge = true

    @Flag(help: "Apply pending migrations before serving (always on in development mode).")
    var migrate = false

    @Flag(
        help: ArgumentHelp(
            "Development mode: without LEDGER_MASTER_KEY, seal payloads with the development key in .ledger/dev-master-key "
                + "(made on first use), and apply pending migrations. Always on without a database URL."))
    var dev = false

    func run() async throws {
        Ledger.bootstrapLogging()
        let logger = Logger(label: "ledger")
        var configuration = try LedgerConfiguration.fromEnvironment()
        if let port { configuration.port = port }
        configuration.host = host
        configuration.databaseURL = database.databaseURL ?? configuration.databaseURL

        var cluster: LocalCluster?
        if configuration.databaseURL == nil {
            let directory = URL(
                fileURLWithPath: ".ledger/dev-cluster", relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
            let started = try await LocalCluster.start(directory: directory.standardizedFileURL, database: "ledger")
            cluster = started
            configuration.databaseURL = started.url
            FileHandle.standardError.write(
                Data(
                    """
                    ────────────────────────────────────────────────────────────────────────
                     DEVELOPMENT SETUP — not for production.
                     No DATABASE_URL was set, so a throwaway PostgreSQL cluster is running at
                     \(started.url)
                     (files in .ledger/dev-cluster, deleted when this process stops), and
                     payloads are sealed with a development master key (.ledger/dev-master-key).
                     Set DATABASE_URL and LEDGER_MASTER_KEY for a real deployment.
                    ────────────────────────────────────────────────────────────────────────

                    """.utf8))
        }
        defer { cluster?.stop() }
        let development = dev || cluster != nil
        // Without a way out, codes and links go to the log: fine on a laptop, a leak of every
        // sign-in code anywhere else (docs/architecture.md "Abuse limits").
        guard development || (configuration.emailsHaveAWayOut && configuration.textsHaveAWayOut) else {
            let missing = [
                configuration.emailsHaveAWayOut ? nil : "emails (set LEDGER_SMTP_URL or LEDGER_DELIVERY_WEBHOOK_URL)",
                configuration.textsHaveAWayOut ? nil : "texts (set LEDGER_TWILIO_* or LEDGER_DELIVERY_WEBHOOK_URL)",
            ].compactMap { $0 }
            throw ValidationError(
                "refusing to start: no way out for \(missing.joined(separator: " or ")); outside development mode (--dev) "
                    + "codes and links never go to a log")
        }
        if dev, cluster == nil {
            let notice =
                "DEVELOPMENT MODE (--dev) — not for production: pending migrations are applied, and without "
                + "LEDGER_MASTER_KEY payloads are sealed with the development key in .ledger/dev-master-key.\n"
            FileHandle.standardError.write(Data(notice.utf8))
        }

        // Client secrets and refresh tokens cross these: never in the clear over a network outside
        // development. Loopback stays on this host (a local proxy, or a test's fake provider).
        for (_, url) in configuration.providerEndpoints where !development && !LedgerConfiguration.isPrivateToHost(url) {
            throw ValidationError(
                "refusing to start: provider token endpoints must be https (or http on loopback) outside development mode (\(url))")
        }
        for warning in configuration.warnings { logger.warning("\(warning)") }
        let clock = SystemClock()
        // Every template parsed and the relays' settings checked now, before the database is
        // touched: a broken override or an SMTP URL that cannot work stops serve at once.
        let sinks: DeliverySinks
        do {
            sinks = try configuration.deliverySinks(templates: try configuration.messageTemplates(), clock: clock, logger: logger)
        } catch {
            throw ValidationError("refusing to start: \(error)")
        }
        let url = configuration.databaseURL!
        let masterKey = try MasterKeySource.load(configuration, allowDevelopmentKey: development, logger: logger)
        let keyring = SubjectKeyring(masterKey: masterKey)
        let client = configuration.databasePool(url: url)
        let migrator = try SchemaMigrator(directory: try SchemaDirectory.locate())
        do {
            let status = try await migrator.status(client: client)
            // An empty database has no instance to break: its first start sets it up. A schema
            // that is behind, or one holding anything else, waits for a deliberate `ledger migrate`.
            let firstStart = status.applied.isEmpty ? try await migrator.schemaIsEmpty(client: client) : false
            if migrate || development || firstStart {
                if !migrate, !development {
                    logger.notice("first start on an empty database: applying \(status.pending.count) migration(s)")
                }
                try await migrator.migrate(client: client)
            } else {
                guard status.mismatched.isEmpty else {
                    throw ValidationError(
                        "refusing to start: applied migrations \(status.mismatched) differ from their files in schema/")
                }
                guard status.pending.isEmpty else {
                    throw ValidationError(
                        "refusing to start: \(status.pending.count) migration(s) pending; run `ledger migrate` (or serve --migrate)")
                }
            }
            // A wrong LEDGER_MASTER_KEY (or --dev's key against a real database) would serve
            // 500s on every read of an existing account: refuse now, naming both keys.
            do {
                try await keyring.checkMasterKey(client: client)
            } catch let error as EventStoreError {
                throw ValidationError("refusing to start: \(error.message); set LEDGER_MASTER_KEY to the store's key")
            }
        } catch {
            await client.shutdown()
            throw error
        }

        let eventStore = EventStore(client: client, keyring: keyring, clock: clock)
        // Readers on a standby, when one is configured: a pool of their own.
        let readClient = configuration.readDatabaseURL.map { configuration.databasePool(url: $0) }
        let services = try LedgerServices(
            configuration: configuration, client: client, eventStore: eventStore, migrator: migrator, clock: clock,
            masterKey: masterKey, readClient: readClient)
        // One dispatcher for email, one for texts and revocations: a relay that answers slowly
        // never holds up a sign-in code. Email batches stay near the SMTP connections' count, so
        // a batch ends well inside its lease even when every send waits out its timeout.
        var messages = DeliveryDispatcher(
            client: client, email: sinks.email, sms: sinks.sms,
            revocations: ProviderRevocationSink(revocations: services.revocations, client: services.providerTokens), clock: clock,
            store: eventStore)
        messages.retryWindow = TimeInterval(configuration.deliveryRetrySeconds)
        messages.observe = { [metrics = services.metrics] in metrics.countDelivery(channel: $0, provider: $1, outcome: $2.rawValue) }
        var emails = messages
        emails.channels = [.email]
        emails.batchSize = 8
        emails.lease = 300
        messages.channels = [.sms, .provider]
        var workers: [any Service] = [
            RemoteCommitListener(store: eventStore, url: url),
            SessionActivityWriter(activity: services.accounts.activity),
            emails, messages,
            EventWebhookDispatcher(
                subscriptions: services.subscriptions, store: services.readStore, clock: clock,
                eventSource: services.configuration.eventSource),
            HoldLapseWorker(client: client, accounts: services.accounts, clock: clock),
        ]
        // First in the group, so it stops last: the readers' route is measured while they serve.
        if let standbyMonitor = services.standbyMonitor { workers.insert(standbyMonitor, at: 0) }
        // Before everything that uses them, so they drain after it has stopped: the database
        // last, the sinks before it (a send under way finishes), the hashes and the sessions'
        // last uses before those.
        let resources: [any Service] = [
            DrainingResource("postgres") {
                await client.shutdown()
                await readClient?.shutdown()
            },
            DrainingResource("delivery sinks") { await sinks.shutdown() },
            DrainingResource("hashing") { [hasher = services.environment.hasher] in await hasher.shutdown() },
        ]
        workers.insert(contentsOf: resources, at: 0)
        workers.append(await purgeService(configuration, store: eventStore, services: services, clock: clock, logger: logger))
        logger.info(
            "serving",
            metadata: [
                "port": "\(configuration.port)", "metrics_port": "\(configuration.metricsPort ?? configuration.port)",
                "master_key_id": "\(masterKey.keyID)",
            ])
        do {
            try await runApplications(services, workers: workers, logger: logger)
        } catch {
            // A service that cannot run stops the group: say why in one line and exit non-zero,
            // so systemd or Kubernetes sees a failure and restarts it (or shows the reason).
            logger.critical("cannot serve: \(Self.stopCause(error, configuration: configuration))")
            throw ExitCode.failure
        }
        logger.info("stopped")
    }
}
