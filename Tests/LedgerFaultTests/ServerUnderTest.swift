import AsyncHTTPClient
import Foundation
import LedgerCrypto
import LedgerPostgres
import LedgerTestSupport
import NIOCore
import NIOFoundationCompat

/// `ledger serve` as a real process on a loopback port, which a test can kill and start again.
final class ServerUnderTest: @unchecked Sendable {
    let databaseURL: String
    let port: Int
    let environment: [String: String]
    private(set) var process: LedgerProcess?
    let http = HTTPClient(eventLoopGroupProvider: .singleton)

    /// `overrides` replace the default environment (an empty value unsets a variable).
    init(databaseURL: String, environment overrides: [String: String] = [:]) throws {
        self.databaseURL = databaseURL
        self.port = try LocalCluster.freePort()
        environment = [
            "DATABASE_URL": databaseURL,
            "LEDGER_MASTER_KEY": try MasterKey.generate().base64,
            "LEDGER_PORT": String(port),
            "LEDGER_SCRYPT_LOG_N": "10",
            "LEDGER_API_KEY_RATE_LIMIT": "0",
            // Outside development mode serve needs a delivery webhook; nothing listens on the
            // discard port, so messages wait in the outbox (no test here reads them).
            "LEDGER_DELIVERY_WEBHOOK_URL": "http://127.0.0.1:9/deliveries",
            "LOG_LEVEL": "warning",
        ].merging(overrides) { $1 }
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts the server (`ledger serve` with `options`, on `host` unless nil, in `directory`
    /// when given) and waits until `/readyz` answers `200`.
    func start(_ options: [String] = [], host: String? = "127.0.0.1", directory: String? = nil) async throws {
        let process = try LedgerProcess(
            ["serve"] + (host.map { ["--host", $0] } ?? []) + options, environment: environment, directory: directory)
        self.process = process
        for _ in 0..<300 {
            if let response = try? await send("GET", "/readyz"), response.status == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw FaultRunFailure("ledger serve did not get ready:\n\(process.output.suffix(2000))")
    }

    /// Starts the server, signs one account up through it, then stops it (SIGTERM); on a
    /// failure it is stopped too before the error goes on.
    func startServingOneSignUp(_ options: [String] = []) async throws {
        do {
            try await start(options)
            _ = try await signUp(0)
        } catch {
            try? await shutdown()
            throw error
        }
        try await shutdown()
    }

    /// `kill -9`: no shutdown code runs, in-flight requests are cut off.
    func kill() async {
        await process?.kill(SIGKILL)
    }

    func shutdown() async throws {
        await process?.kill(SIGTERM)
        try await http.shutdown()
    }

    /// Runs another `ledger` command against the same database and master key.
    func ledger(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await LedgerProcess.run(arguments, environment: environment)
    }

    /// A new API key with `scopes`.
    func createKey(scopes: String) async throws -> String {
        let (status, output) = try await ledger(["keys", "create", "--name", "fault-run", "--scope", scopes])
        guard status == 0, let key = output.split(separator: "\n").last.map(String.init) else {
            throw FaultRunFailure("ledger keys create failed (\(status))")
        }
        return key
    }

    struct Reply {
        let status: Int
        let body: Data
        var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
    }

    func send(_ method: String, _ path: String, json: [String: Any]? = nil, token: String? = nil) async throws -> Reply {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .init(rawValue: method)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: json)))
        }
        let response = try await http.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 16 << 20)
        return Reply(status: Int(response.status.code), body: Data(buffer: body))
    }

    /// Signs up an account with email and password; its id.
    func signUp(_ number: Int) async throws -> String {
        let reply = try await send(
            "POST", "/auth/email/signup",
            json: ["email": "fault-\(number)-\(UUID().uuidString.prefix(8))@example.net", "password": "amber-orchard-\(number)4"])
        guard reply.status == 201, let id = reply.json?["account_id"] as? String else {
            throw FaultRunFailure("sign-up answered \(reply.status)")
        }
        return id
    }
}
