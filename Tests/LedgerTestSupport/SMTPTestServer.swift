import Foundation
import LedgerCore

/// A real SMTP server for a test: scripts/smtp-server.py (aiosmtpd) as a child process on a free
/// loopback port, recording each connection, AUTH and message (parsed by Python's email package,
/// as a mail client reads it) in a JSON-lines file this reads back.
public final class SMTPTestServer: @unchecked Sendable {
    public struct Options {
        public init() {}

        /// `starttls`, `implicit` or `none`.
        public var tls = "starttls"
        public var certificate: TestCertificate?
        public var user: String?
        public var password: String?
        public var mechanisms = "PLAIN,LOGIN"
        public var refuseStartTLS = false
        public var dataDelay = 0.0
        public var idleTimeout: Double?
    }

    /// One line of the record: a connection, an AUTH or a message.
    public struct Event: Decodable {
        public var event: String
        public var connection: Int?
        public var mechanism: String?
        public var tls: Bool?
        public var mail_from: String?
        public var rcpt_tos: [String]?
        public var subject: String?
        public var from: [Mailbox]?
        public var to: [Mailbox]?
        public var reply_to: [Mailbox]?
        public var date: String?
        public var date_valid: Bool?
        public var message_id: String?
        public var mime_version: String?
        public var content_type: String?
        public var header_names: [String]?
        public var parts: [Part]?
        public var defects: [String]?
        public var max_line_length: Int?
        public var bare_line_feeds: Int?
        public var raw: String?
    }

    public struct Mailbox: Decodable, Equatable {
        public var display_name: String
        public var address: String

        public init(display_name: String, address: String) {
            self.display_name = display_name
            self.address = address
        }
    }

    public struct Part: Decodable {
        public var content_type: String
        public var charset: String?
        public var transfer_encoding: String?
        public var content: String
    }

    public let port: Int
    private let pid: pid_t
    private let directory: URL
    private var recordPath: String { directory.appendingPathComponent("record.jsonl").path }
    private var outputPath: String { directory.appendingPathComponent("output.log").path }
    private let lock = NSLock()
    private var stopped = false

    private init(pid: pid_t, port: Int, directory: URL) {
        self.pid = pid
        self.port = port
        self.directory = directory
    }

    deinit { stop() }

    public static func start(_ options: Options) async throws -> SMTPTestServer {
        let python = try await SMTPTestEnvironment.shared.python()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-smtp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var arguments = [
            SMTPTestEnvironment.root.appendingPathComponent("scripts/smtp-server.py").path, "--tls", options.tls, "--mechanisms",
            options.mechanisms, "--record", directory.appendingPathComponent("record.jsonl").path,
            "--data-delay", String(options.dataDelay),
        ]
        if let certificate = options.certificate { arguments += ["--cert", certificate.certificatePath, "--key", certificate.keyPath] }
        if let user = options.user, let password = options.password { arguments += ["--user", user, "--password", password] }
        if options.refuseStartTLS { arguments.append("--refuse-starttls") }
        if let idleTimeout = options.idleTimeout { arguments += ["--idle-timeout", String(idleTimeout)] }
        let output = directory.appendingPathComponent("output.log").path
        let pid = try ChildProcess.spawn(python, arguments, outputPath: output)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("port ") }), let port = Int(line.dropFirst(5)) {
                return SMTPTestServer(pid: pid, port: port, directory: directory)
            }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw ChildProcess.Failure(description: "smtp-server.py exited before listening:\n\(text)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        kill(pid, SIGKILL)
        _ = ChildProcess.waitForExit(pid)
        throw ChildProcess.Failure(description: "smtp-server.py did not listen within 30 s")
    }

    /// Everything recorded so far.
    public func events() -> [Event] {
        guard let text = try? String(contentsOfFile: recordPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Event.self, from: Data($0.utf8)) }
    }

    public func messages() -> [Event] { events().filter { $0.event == "message" } }
    public func connections() -> Int { events().filter { $0.event == "connect" }.count }
    public func authentications() -> [Event] { events().filter { $0.event == "auth" } }

    /// Waits until `count` messages arrived (they are recorded before the server answers 250,
    /// so after a successful send they are there at once).
    public func waitForMessages(_ count: Int, timeout: Duration = .seconds(10)) async throws -> [Event] {
        let deadline = ContinuousClock.now + timeout
        while messages().count < count && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        return messages()
    }

    /// What the server printed (never an address or a password).
    public var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        // SIGKILL: it has nothing to save (each record line is flushed as written), and a
        // signal mask inherited from this process could hold back a SIGTERM.
        kill(pid, SIGKILL)
        _ = ChildProcess.waitForExit(pid)
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A self-signed certificate and its key, made with the openssl command for the test.
public struct TestCertificate: Sendable {
    public let certificatePath: String
    public let keyPath: String

    /// This process's certificates, removed when it exits.
    private static let directory: URL = {
        atexit { try? FileManager.default.removeItem(at: TestCertificate.directoryURL(pid: getpid())) }
        return directoryURL(pid: getpid())
    }()

    private static func directoryURL(pid: pid_t) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("ledger-smtp-certificates-\(pid)")
    }

    /// `names`: the subjectAltName entries (`DNS:localhost`, `IP:127.0.0.1`).
    public static func make(names: [String]) throws -> TestCertificate {
        let directory = Self.directory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = TestCertificate(
            certificatePath: directory.appendingPathComponent("cert.pem").path, keyPath: directory.appendingPathComponent("key.pem").path)
        let openssl = try SMTPTestEnvironment.executable("openssl")
        let result = try ChildProcess.run(
            openssl,
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj",
                "/CN=ledger test",
                "-addext", "subjectAltName=\(names.joined(separator: ","))", "-keyout", certificate.keyPath, "-out",
                certificate.certificatePath,
            ])
        guard result.status == 0 else { throw ChildProcess.Failure(description: "openssl req failed:\n\(result.output)") }
        return certificate
    }
}

/// Where the repository, the venv's python and the commands are.
public actor SMTPTestEnvironment {
    public static let shared = SMTPTestEnvironment()
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    private var preparing: Task<String, any Error>?

    /// `LEDGER_TEST_SMTP_PYTHON` (scripts/test.sh sets it), else the python of the venv that
    /// scripts/smtp-venv.sh makes or finds (so `swift test` alone works too).
    public func python() async throws -> String {
        if let configured = ProcessInfo.processInfo.environment["LEDGER_TEST_SMTP_PYTHON"], !configured.isEmpty { return configured }
        if let preparing { return try await preparing.value }
        let task = Task<String, any Error> {
            try await withCheckedThrowingContinuation { continuation in
                // A blocking child process: on a thread of its own, not the cooperative pool.
                Thread.detachNewThread {
                    do {
                        let script = Self.root.appendingPathComponent("scripts/smtp-venv.sh").path
                        let result = try ChildProcess.run("/bin/bash", [script])
                        let python = result.output.split(separator: "\n").last.map(String.init) ?? ""
                        guard result.status == 0, python.hasSuffix("/python") else {
                            throw ChildProcess.Failure(description: "scripts/smtp-venv.sh failed:\n\(result.output)")
                        }
                        continuation.resume(returning: python)
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
        }
        preparing = task
        return try await task.value
    }

    /// The full path of `name` on PATH.
    static func executable(_ name: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") + ["/usr/bin", "/bin"] {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw ChildProcess.Failure(description: "\(name) is not installed (scripts/smtp-venv.sh installs it)")
    }
}
