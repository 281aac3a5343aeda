import ArgumentParser
import Foundation
import LedgerApp
import LedgerPostgres
import LedgerProviders
import LedgerServer
import Logging

/// `ledger serve`: the HTTP service. Without a database URL it runs a throwaway local
/// PostgreSQL cluster and a development master key, and says so; `--dev` uses the development
/// key (and migrates) against a database of your own.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the HTTP service.")

    @OptionGroup var database: DatabaseOptions

    @Option(help: "HTTP port (default: $LEDGER_PORT or 8080).")
    var port: Int?

    @Option(help: "Address to listen on (default: 0.0.0.0; 127.0.0.1 in development mode).")
    var host: String?

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
        configuration.databaseURL = database.databaseURL ?? configuration.databaseURL

        var cluster: LocalCluster?
        if configuration.databaseURL == nil {
            let environment = ProcessInfo.processInfo.environment
            if let refusal = LedgerConfiguration.developmentFallbackRefusal(environment: environment, explicitDevelopment: dev) {
                throw ConfigurationError(refusal)
            }
            let started = try await ServeAssembly.startDevelopmentCluster()
            cluster = started
            configuration.databaseURL = started.url
        }
        // The development cluster's data stays for the next run (`./scripts/run.sh --reset` deletes it).
        defer { cluster?.stop(removeFiles: false) }
        let development = dev || cluster != nil
        if development {
            configuration.applyDevelopmentDefaults(
                host: host, localCluster: cluster != nil, environment: ProcessInfo.processInfo.environment)
            if let cluster { try ServeAssembly.recordDevelopmentSettings(configuration, cluster: cluster) }
            // Sign in with Apple and Google take `ledger dev id-token`'s tokens: its key set must exist.
            if configuration.appleJWKS == DevelopmentFiles.identityKeySet {
                _ = try DevelopmentIdentityIssuer(keyPath: DevelopmentFiles.identityKey, jwksPath: DevelopmentFiles.identityKeySet)
            }
        } else {
            configuration.host = host ?? configuration.host
        }
        try ServeAssembly.check(configuration, development: development)
        if development {
            FileHandle.standardError.write(Data(ServeAssembly.developmentBanner(configuration, cluster: cluster).utf8))
        }

        for warning in configuration.warnings { logger.warning("\(warning)") }
        if let tlsWarning = configuration.tlsWarning { logger.warning("\(tlsWarning)") }
        let masterKey = try MasterKeySource.load(configuration, allowDevelopmentKey: development, logger: logger)
        let assembly = try await ServeAssembly.build(
            configuration, masterKey: masterKey, options: .init(development: development, migrate: migrate, purge: purge),
            logger: logger)
        logger.info(
            "serving",
            metadata: [
                "port": "\(configuration.port)", "metrics_port": "\(configuration.metricsPort ?? configuration.port)",
                "master_key_id": "\(masterKey.keyID)",
            ])
        do {
            try await assembly.run(logger: logger)
        } catch {
            // A service that cannot run stops the group: say why in one line and exit non-zero,
            // so systemd or Kubernetes sees a failure and restarts it (or shows the reason).
            logger.critical("cannot serve: \(Self.stopCause(error, configuration: configuration))")
            throw ExitCode.failure
        }
        logger.info("stopped")
    }
}
