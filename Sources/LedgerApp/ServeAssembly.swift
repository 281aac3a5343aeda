import Foundation
import LedgerCore
import LedgerCrypto
import LedgerDelivery
import LedgerEventStore
import LedgerPostgres
import LedgerServer
import LedgerWorkers
import Logging
import ServiceLifecycle

/// Everything `ledger serve` runs, built in one place from its configuration: the database
/// pools (checked, and migrated as the options say), the services the routes use, the delivery
/// sinks, the workers and the purge. Every long-lived resource is a member of the service group
/// that drains it after its users stop, so making one registers its shutdown.
public struct ServeAssembly: Sendable {
    /// What the routes use.
    public let services: LedgerServices
    /// The service group's members besides the HTTP servers, in the group's order: the
    /// resources first (they stop last), then the workers.
    public let members: [any Service]
    /// HTTPS's certificate and key, when the service serves it itself.
    public let tls: TLSCertificates?

    /// What `serve`'s options decide.
    public struct Options: Sendable {
        /// Development mode: pending migrations are applied.
        public var development: Bool
        /// Apply pending migrations (`--migrate`).
        public var migrate: Bool
        /// Run the purge and the retention sweep here (ready to lead them), or only report.
        public var purge: Bool

        public init(development: Bool, migrate: Bool, purge: Bool) {
            self.development = development
            self.migrate = migrate
            self.purge = purge
        }
    }

    /// Builds it. Every template is parsed and the relays' settings checked before the database
    /// is touched; then the schema (`ConfigurationError` when it is behind or changed and
    /// migrating is not asked for, or holds another service's tables) and the master key.
    public static func build(
        _ configuration: LedgerConfiguration, masterKey: MasterKey, options: Options, clock: any LedgerClock = SystemClock(),
        logger: Logger
    ) async throws -> ServeAssembly {
        // The pool, the purge's lock and the listener all want the primary, whatever the URL says.
        guard let url = configuration.databaseURL.map(ConnectionTarget.requiringPrimary) else {
            throw ConfigurationError("no DATABASE_URL")
        }
        // The TLS files before the database: a wrong path or key stops the start at once.
        let tls = try configuration.tls.map { try TLSCertificates(files: $0) }
        let sinks: DeliverySinks
        do {
            // The API's error messages in every language, or none of the service starts.
            try ErrorMessages.checkBuiltIn()
            let templates = try configuration.messageTemplates()
            for shadowed in templates.shadowedOverrides {
                logger.warning(
                    "a template override does not reach every language",
                    metadata: ["file": "\(shadowed.file)", "built_in_instead": "\(shadowed.builtIn.joined(separator: ", "))"])
            }
            sinks = try configuration.deliverySinks(templates: templates, clock: clock, logger: logger)
        } catch {
            throw ConfigurationError("refusing to start: \(error)")
        }
        let keyring = SubjectKeyring(masterKey: masterKey)
        let client = configuration.databasePool(url: url)
        let migrator = try SchemaMigrator(directory: try SchemaDirectory.locate())
        do {
            try await prepare(client, migrator: migrator, keyring: keyring, options: options, logger: logger)
        } catch {
            await client.shutdown()
            await sinks.shutdown()
            throw error
        }
        let eventStore = EventStore(client: client, keyring: keyring, clock: clock)
        // Readers on a standby, when one is configured: a pool of their own.
        let readClient = configuration.readDatabaseURL.map { configuration.databasePool(url: $0) }
        // The standby is measured on a connection of its own, and the readers are held to the
        // server it measured (libpq may spread a multi-host URL's connections): the monitor's.
        let measuringClient = configuration.readDatabaseURL.map {
            PostgresClient(configuration: .init(url: $0, maximumConnections: 1, checkoutTimeout: .seconds(5)))
        }
        let services = try LedgerServices(
            configuration: configuration, client: client, eventStore: eventStore, migrator: migrator, clock: clock,
            masterKey: masterKey, readClient: readClient, measuringClient: measuringClient)
        // JWT access tokens need a key to sign with from the first sign-in: the first start makes one.
        if configuration.accessTokenFormat == .jwt {
            do {
                try await services.signingKeys.ensureSigningKey()
            } catch {
                await client.shutdown()
                await sinks.shutdown()
                throw ConfigurationError("refusing to start: no access-token signing key could be made or read: \(error)")
            }
        }
        var members = workers(services, url: url, sinks: sinks)
        // Before everything that uses them, so they drain after it has stopped: the database
        // last, the store's group commit before it (every queued append answered), the sinks
        // before that (a send under way finishes), the hashes and the sessions' last uses
        // before those.
        let resources: [any Service] =
            [client] + (readClient.map { [$0] } ?? []) + [eventStore, sinks, services.environment.hasher]
        members.insert(contentsOf: resources, at: 0)
        members.append(
            await purgeService(configuration, purge: options.purge, store: eventStore, services: services, clock: clock, logger: logger))
        return ServeAssembly(services: services, members: members, tls: tls)
    }

    /// Runs the members with the API (and `/metrics` on its own port when configured) until
    /// SIGTERM or SIGINT; throws when a member fails.
    public func run(logger: Logger) async throws {
        try await runApplications(services, tls: tls, workers: members, logger: logger)
    }

    /// The schema made current as the options allow, and the master key checked against the store's.
    static func prepare(
        _ client: PostgresClient, migrator: SchemaMigrator, keyring: SubjectKeyring, options: Options, logger: Logger
    ) async throws {
        let status = try await migrator.status(client: client)
        // An empty database has no instance to break: its first start sets it up. A schema
        // that is behind, or one holding anything else, waits for a deliberate `ledger migrate`.
        let firstStart = status.applied.isEmpty ? try await migrator.schemaIsEmpty(client: client) : false
        if options.migrate || options.development || firstStart {
            if !options.migrate, !options.development {
                logger.notice("first start on an empty database: applying \(status.pending.count) migration(s)")
            }
            try await migrator.migrate(client: client)
        } else {
            guard status.mismatched.isEmpty else {
                throw ConfigurationError("refusing to start: applied migrations \(status.mismatched) differ from their files in schema/")
            }
            guard status.pending.isEmpty else {
                throw ConfigurationError(
                    "refusing to start: \(status.pending.count) migration(s) pending; run `ledger migrate` (or serve --migrate)")
            }
        }
        // A wrong LEDGER_MASTER_KEY (or --dev's key against a real database) would serve 500s
        // on every read of an existing account: refuse now, naming both keys.
        do {
            try await keyring.checkMasterKey(client: client)
        } catch let error as EventStoreError {
            throw ConfigurationError("refusing to start: \(error.message); set LEDGER_MASTER_KEY to the store's key")
        }
    }

    /// The background workers: the commit listener, the sessions' last uses, the two delivery
    /// dispatchers, webhook pushes, lapsing holds, and the standby's monitor first when there is one.
    static func workers(_ services: LedgerServices, url: String, sinks: DeliverySinks) -> [any Service] {
        let configuration = services.configuration
        let (client, clock, eventStore) = (services.client, services.clock, services.eventStore)
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
                subscriptions: services.subscriptions, store: services.readStore, clock: clock, eventSource: configuration.eventSource),
            HoldLapseWorker(client: client, accounts: services.accounts, clock: clock),
        ]
        // First in the group, so it stops last: the readers' route is measured while they serve.
        if let standbyMonitor = services.standbyMonitor { workers.insert(standbyMonitor, at: 0) }
        return workers
    }
}
