import ArgumentParser
import AsyncHTTPClient
import Foundation
import LedgerAccounts
import LedgerApp
import LedgerCore
import LedgerPostgres
import NIOCore

/// `ledger-bench mfa`: `POST /auth/mfa/verify` at `--connections` concurrent clients. A code is
/// accepted once per account and 30 s step, so each verify needs an account of its own: the
/// set-up signs up `--accounts` accounts over HTTP, turns TOTP on for each, and signs each in
/// to its `mfa_token`; the measurement then sends every token once with the current code.
/// Run against a service with `LEDGER_TRUSTED_PROXIES=127.0.0.1/32` (each set-up request comes
/// from an address of its own, below the per-address limits) and a delivery webhook nobody
/// answers: the set-up reads each account's re-auth link from the outbox (`DATABASE_URL`).
struct MFABench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mfa", abstract: "Second-factor verifications per second and their latency.")

    @OptionGroup var database: BenchDatabase
    @Option(help: "The service's base URL.") var url = "http://127.0.0.1:8080"
    @Option(help: "Accounts (each verifies once).") var accounts = 2000
    @Option(help: "Concurrent clients.") var connections = 64

    func run() async throws {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections + 4)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let client = BenchHTTP(http: http, url: url)
        let outbox = PostgresClient(
            configuration: .init(url: try database.requiredURL(try LedgerConfiguration.fromEnvironment()), maximumConnections: 8))
        @Sendable func post(_ path: String, _ body: [String: String], headers: [String: String] = [:]) async throws -> (UInt, [String: Any])
        {
            try await client.post(path, body, headers: headers)
        }
        let runID = UUID().uuidString.prefix(8).lowercased()
        let password = "violet-harbor-91"
        // Set-up: accounts with TOTP on, each signed in to its mfa_token.
        let prepared = try await withThrowingTaskGroup(of: [(token: String, secret: String)].self) { group in
            let workers = min(connections, 8)
            let perWorker = (accounts + workers - 1) / workers
            for worker in 0..<workers {
                group.addTask {
                    var made: [(token: String, secret: String)] = []
                    for index in 0..<perWorker where worker * perWorker + index < accounts {
                        let email = "mfa-\(runID)-\(worker)-\(index)@example.com"
                        let (_, session) = try await post("/auth/email/signup", ["email": email, "password": password])
                        guard let access = session["access_token"] as? String else { throw ValidationError("sign-up failed: \(session)") }
                        let bearer = ["Authorization": "Bearer \(access)"]
                        // Turning TOTP on takes a grant that proves the address (manage_mfa).
                        let grant = try await client.emailLinkGrant(email: email, access: access, outbox: outbox)
                        let reauth = ["X-Reauth-Token": grant]
                        let (_, begun) = try await post("/me/mfa/totp", [:], headers: bearer.merging(reauth) { a, _ in a })
                        guard let base32 = begun["secret"] as? String, let secret = TOTPCodes.secret(fromBase32: base32) else {
                            throw ValidationError("enrolment failed: \(begun)")
                        }
                        let code = TOTPCodes.code(secret, step: TOTPCodes.step(at: Date()))
                        let (confirmed, _) = try await post("/me/mfa/totp/confirm", ["code": code], headers: bearer)
                        guard confirmed == 200 else { throw ValidationError("confirmation answered \(confirmed)") }
                        let (_, challenge) = try await post("/auth/email/login", ["email": email, "password": password])
                        guard let token = challenge["mfa_token"] as? String else { throw ValidationError("no mfa_token: \(challenge)") }
                        made.append((token, secret))
                    }
                    return made
                }
            }
            return try await group.reduce(into: [(token: String, secret: String)]()) { $0 += $1 }
        }
        await outbox.shutdown()
        // The confirmation spent the current step's code: verify in the next step.
        let step = TOTPCodes.step(at: Date())
        while TOTPCodes.step(at: Date()) == step { try await Task.sleep(for: .milliseconds(100)) }

        let queue = WorkQueue(prepared)
        let started = ContinuousClock.now
        let results = try await withThrowingTaskGroup(of: [(UInt, Duration)].self) { group in
            for _ in 0..<connections {
                group.addTask {
                    var results: [(UInt, Duration)] = []
                    while let (token, secret) = queue.next() {
                        let code = TOTPCodes.code(secret, step: TOTPCodes.step(at: Date()))
                        let sent = ContinuousClock.now
                        let (status, _) = try await post("/auth/mfa/verify", ["mfa_token": token, "code": code])
                        results.append((status, ContinuousClock.now - sent))
                    }
                    return results
                }
            }
            return try await group.reduce(into: [(UInt, Duration)]()) { $0 += $1 }
        }
        let elapsed = ContinuousClock.now - started
        let seconds = elapsed.inSeconds
        let latencies = Latencies(results.map(\.1))
        let statuses = Dictionary(grouping: results, by: \.0).mapValues(\.count)
        let statusList = statuses.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        let rate = String(format: "%.0f", Double(results.count) / seconds)
        let p50 = String(format: "%.2f", latencies.percentile(0.5))
        let p99 = String(format: "%.2f", latencies.percentile(0.99))
        print(
            "mfa verify: \(results.count) requests in \(String(format: "%.2f", seconds)) s = \(rate)/s at \(connections) connections; "
                + "p50 \(p50) ms, p99 \(p99) ms; statuses \(statusList)")
        try await http.shutdown()
    }
}

/// The prepared tokens, handed out once each to concurrent clients.
final class WorkQueue: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [(String, String)]

    init(_ items: [(token: String, secret: String)]) { self.items = items.map { ($0.token, $0.secret) }.reversed() }

    func next() -> (String, String)? { lock.withLock { items.popLast() } }
}
