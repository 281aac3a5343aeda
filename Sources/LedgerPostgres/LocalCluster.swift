import Foundation
import LedgerCore
import Logging

/// A throwaway PostgreSQL cluster on this machine, made with the installed server's `initdb`
/// and `pg_ctl`: the development default when no `DATABASE_URL` is set, and the tests' database.
///
/// It listens on 127.0.0.1 at a private port with its socket in its own directory. As root it
/// runs as the `postgres` OS user, since `initdb` refuses root.
public final class LocalCluster: Sendable {
    public let directory: URL
    public let port: Int
    public let database: String
    private let binDirectory: URL
    private let runAsPostgres: Bool
    private let logger: Logger

    /// The connection URL of the cluster's database.
    public var url: String { url(database: database) }

    public func url(database: String) -> String {
        "postgresql://postgres@127.0.0.1:\(port)/\(database)?connect_timeout=5"
    }

    public var dataDirectory: URL { directory.appendingPathComponent("data") }

    private init(directory: URL, port: Int, database: String, binDirectory: URL, runAsPostgres: Bool, logger: Logger) {
        self.directory = directory
        self.port = port
        self.database = database
        self.binDirectory = binDirectory
        self.runAsPostgres = runAsPostgres
        self.logger = logger
    }

    /// Creates and starts a new cluster in `directory` (wiped first) and creates `database`.
    ///
    /// - Parameter durable: false turns fsync off, for tests only.
    public static func start(
        directory: URL, port: Int? = nil, database: String = "ledger", durable: Bool = true,
        logger: Logger = Logger(label: "ledger.local-cluster")
    ) async throws -> LocalCluster {
        let binDirectory = try findBinDirectory()
        let fileManager = FileManager.default
        // A cluster left running by a process that died: stop it before wiping its files.
        if fileManager.fileExists(atPath: directory.appendingPathComponent("data/postmaster.pid").path) {
            let owner = geteuid() == 0 ? ("/usr/sbin/runuser", ["-u", "postgres", "--"]) : ("", [])
            let pgCtl = binDirectory.appendingPathComponent("pg_ctl").path
            let arguments = ["-D", directory.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"]
            _ = owner.0.isEmpty ? try? ChildProcess.run(pgCtl, arguments) : try? ChildProcess.run(owner.0, owner.1 + [pgCtl] + arguments)
        }
        try? fileManager.removeItem(at: directory)
        try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        let runAsPostgres = geteuid() == 0
        let cluster = LocalCluster(
            directory: directory, port: try port ?? freePort(), database: database,
            binDirectory: binDirectory, runAsPostgres: runAsPostgres, logger: logger)
        if runAsPostgres {
            try cluster.run("/bin/chown", ["postgres:postgres", directory.path], asPostgres: false)
        }
        try cluster.run(
            binDirectory.appendingPathComponent("initdb").path,
            [
                "-D", cluster.dataDirectory.path, "-U", "postgres", "--auth=trust", "--encoding=UTF8",
                "--locale=C.UTF-8", "--no-instructions",
            ])
        var settings = [
            "port = \(cluster.port)",
            "listen_addresses = '127.0.0.1'",
            "unix_socket_directories = '\(directory.path)'",
            "max_connections = 300",
            "shared_buffers = '128MB'",
        ]
        if !durable { settings += ["fsync = off", "synchronous_commit = off", "full_page_writes = off"] }
        let configuration = cluster.dataDirectory.appendingPathComponent("postgresql.conf")
        let handle = try FileHandle(forWritingTo: configuration)
        handle.seekToEndOfFile()
        handle.write(("\n# account-ledger local cluster\n" + settings.joined(separator: "\n") + "\n").data(using: .utf8)!)
        try handle.close()
        try cluster.startServer()
        try cluster.run(
            binDirectory.appendingPathComponent("psql").path,
            [
                "-h", "127.0.0.1", "-p", "\(cluster.port)", "-U", "postgres", "-d", "postgres", "-qAt",
                "-c", "CREATE DATABASE \"\(database)\"",
            ])
        logger.info("local PostgreSQL cluster started", metadata: ["port": "\(cluster.port)", "directory": "\(directory.path)"])
        return cluster
    }

    /// The cluster kept in `directory` by an earlier `open` or `start`, started again on its
    /// recorded port (another free one when that is taken); a new one, as `start` makes it, when
    /// there is none. Its data outlives the process: `stop(removeFiles: false)` keeps it.
    public static func open(
        directory: URL, database: String = "ledger", logger: Logger = Logger(label: "ledger.local-cluster")
    ) async throws -> LocalCluster {
        let fileManager = FileManager.default
        let portFile = directory.appendingPathComponent("port")
        guard fileManager.fileExists(atPath: directory.appendingPathComponent("data/PG_VERSION").path),
            let saved = (try? String(contentsOf: portFile, encoding: .utf8)).flatMap({
                Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
            })
        else {
            let cluster = try await start(directory: directory, database: database, logger: logger)
            try String(cluster.port).write(to: portFile, atomically: true, encoding: .utf8)
            return cluster
        }
        let binDirectory = try findBinDirectory()
        let runAsPostgres = geteuid() == 0
        let stale = LocalCluster(
            directory: directory, port: saved, database: database, binDirectory: binDirectory, runAsPostgres: runAsPostgres,
            logger: logger)
        // A server left running by a process that died (kill -9): stop it, keeping its files.
        if fileManager.fileExists(atPath: stale.dataDirectory.appendingPathComponent("postmaster.pid").path) {
            _ = try? stale.run(
                binDirectory.appendingPathComponent("pg_ctl").path, ["-D", stale.dataDirectory.path, "-m", "fast", "-w", "stop"])
        }
        let port = isFree(saved) ? saved : try freePort()
        let cluster = LocalCluster(
            directory: directory, port: port, database: database, binDirectory: binDirectory, runAsPostgres: runAsPostgres,
            logger: logger)
        do {
            try cluster.startServer()
        } catch {
            // Files from another PostgreSQL version, or damaged: say how to start afresh.
            throw LocalClusterError(
                message: "cannot start the cluster kept in \(directory.path) (delete it, or `./scripts/run.sh --reset`): \(error)")
        }
        try String(port).write(to: portFile, atomically: true, encoding: .utf8)
        logger.info("local PostgreSQL cluster reopened", metadata: ["port": "\(port)", "directory": "\(directory.path)"])
        return cluster
    }

    /// A hot standby of this cluster in `directory` (wiped first), by streaming replication:
    /// `pg_basebackup -R` from this server, started on a port of its own. Read-only; it replays
    /// what the primary commits.
    public func startStandby(directory: URL, logger: Logger = Logger(label: "ledger.local-cluster")) throws -> LocalCluster {
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let standby = LocalCluster(
            directory: directory, port: try Self.freePort(), database: database, binDirectory: binDirectory,
            runAsPostgres: runAsPostgres, logger: logger)
        if runAsPostgres { try run("/bin/chown", ["postgres:postgres", directory.path], asPostgres: false) }
        try run(
            binDirectory.appendingPathComponent("pg_basebackup").path,
            ["-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-D", standby.dataDirectory.path, "-R", "-X", "stream", "-c", "fast"])
        let settings = [
            "port = \(standby.port)", "unix_socket_directories = '\(directory.path)'", "hot_standby = on",
            "hot_standby_feedback = on",
        ]
        let configuration = standby.dataDirectory.appendingPathComponent("postgresql.conf")
        let handle = try FileHandle(forWritingTo: configuration)
        handle.seekToEndOfFile()
        handle.write(("\n# account-ledger standby\n" + settings.joined(separator: "\n") + "\n").data(using: .utf8)!)
        try handle.close()
        try standby.startServer()
        logger.info("local PostgreSQL standby started", metadata: ["port": "\(standby.port)", "primary": "\(port)"])
        return standby
    }

    /// Stops the server (fast shutdown) and, when asked, deletes its files.
    public func stop(removeFiles: Bool = true) {
        _ = try? run(
            binDirectory.appendingPathComponent("pg_ctl").path,
            ["-D", dataDirectory.path, "-m", "fast", "-w", "stop"])
        if removeFiles { try? FileManager.default.removeItem(at: directory) }
    }

    /// Stops the server and starts it again on the same port and files.
    public func restart() throws {
        try run(binDirectory.appendingPathComponent("pg_ctl").path, ["-D", dataDirectory.path, "-m", "fast", "-w", "stop"])
        try startServer()
    }

    /// Stops the server and keeps its files, so `startServer` can bring it back.
    public func stopServer() throws {
        try run(binDirectory.appendingPathComponent("pg_ctl").path, ["-D", dataDirectory.path, "-m", "fast", "-w", "stop"])
    }

    /// Starts the server on `port` (whatever its configuration file says), in a session of its
    /// own: a Ctrl-C in the terminal reaches the service, which closes its connections before it
    /// stops the server, instead of reaching the server first (whose fast shutdown would end
    /// every connection with a `FATAL` the service prints).
    public func startServer() throws {
        try run(
            "/usr/bin/setsid",
            [
                "-w", binDirectory.appendingPathComponent("pg_ctl").path, "-D", dataDirectory.path, "-l",
                directory.appendingPathComponent("server.log").path, "-o", "-p \(port)", "-w", "-t", "60", "start",
            ])
    }

    @discardableResult
    private func run(_ executable: String, _ arguments: [String], asPostgres: Bool? = nil) throws -> String {
        let (program, argv) =
            (asPostgres ?? runAsPostgres)
            ? ("/usr/sbin/runuser", ["-u", "postgres", "--", executable] + arguments)
            : (executable, arguments)
        let (status, output) = try ChildProcess.run(program, argv)
        guard status == 0 else {
            throw LocalClusterError(
                message: "\((executable as NSString).lastPathComponent) failed (exit \(status)): \(output)")
        }
        return output
    }

    /// The installed server's binaries: `pg_config --bindir`, else the newest /usr/lib/postgresql/N/bin.
    static func findBinDirectory() throws -> URL {
        let fileManager = FileManager.default
        let versions = (try? fileManager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let candidates = versions.compactMap(Int.init).sorted(by: >).map { "/usr/lib/postgresql/\($0)/bin" }
        for candidate in candidates where fileManager.isExecutableFile(atPath: candidate + "/initdb") {
            return URL(fileURLWithPath: candidate)
        }
        if let path = ProcessInfo.processInfo.environment["PATH"] {
            for directory in path.split(separator: ":") where fileManager.isExecutableFile(atPath: "\(directory)/initdb") {
                return URL(fileURLWithPath: String(directory))
            }
        }
        throw LocalClusterError(
            message: "no PostgreSQL server found (initdb); install it with: apt-get install -y postgresql")
    }

    /// Whether a loopback `port` can be bound right now.
    static func isFree(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        // As PostgreSQL binds: a port whose last connections linger in TIME_WAIT is free to it.
        var reuse: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// A loopback port nothing listens on right now.
    public static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw LocalClusterError(message: "cannot open a socket to find a free port") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw LocalClusterError(message: "cannot bind a socket to find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// A local cluster could not be created, started or stopped.
public struct LocalClusterError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}
