import ArgumentParser
import AsyncHTTPClient
import Foundation
import LedgerCore
import NIOCore

/// `ledger-bench login-flood`: sign-ins of existing accounts while a flood of sign-ups from many
/// addresses keeps the hashing threads busy (sign-ins stay ahead: BENCHMARKS.md). Runs against a
/// service started with `LEDGER_TRUSTED_PROXIES=127.0.0.1/32` so each request's
/// `X-Forwarded-For` address is believed: every sign-up comes from an address of its own, as a
/// botnet's would, below any per-address limit.
struct LoginFloodBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login-flood", abstract: "Sign-in latency of existing accounts during a sign-up flood.")

    @Option(help: "The service's base URL.") var url = "http://127.0.0.1:8080"
    @Option(help: "Concurrent sign-up clients (the flood).") var flooders = 64
    @Option(help: "Concurrent sign-in clients.") var signers = 4
    @Option(help: "Existing accounts the sign-ins use.") var accounts = 8
    @Option(help: "Seconds to measure.") var seconds = 30.0
    @Flag(
        help:
            "Flooders send again at once after a 503 instead of waiting its Retry-After (the HTTP layer's worst case, not only hashing's).")
    var ignoreRetryAfter = false

    func run() async throws {
        let ignoreRetryAfter = self.ignoreRetryAfter
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: flooders + signers + 4)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let runID = UUID().uuidString.prefix(8).lowercased()
        let password = "violet-harbor-91"
        func post(_ path: String, _ body: [String: String]) async throws -> (status: UInt, elapsed: Duration) {
            var request = HTTPClientRequest(url: url + path)
            request.method = .POST
            // A fresh address for every request.
            request.headers.add(name: "X-Forwarded-For", value: benchClientAddress())
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: body)))
            let started = ContinuousClock.now
            let response = try await http.execute(request, timeout: .seconds(60))
            _ = try await response.body.collect(upTo: 1 << 20)
            return (response.status.code, ContinuousClock.now - started)
        }
        let emails = (0..<accounts).map { "login-\(runID)-\($0)@example.com" }
        for email in emails {
            let created = try await post("/auth/email/signup", ["email": email, "password": password])
            guard created.status == 201 else { throw ValidationError("sign-up of \(email) answered \(created.status)") }
        }

        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let started = ContinuousClock.now
        let flood = Task { () -> [UInt: Int] in
            try await withThrowingTaskGroup(of: [UInt: Int].self) { group in
                for worker in 0..<flooders {
                    group.addTask {
                        var statuses: [UInt: Int] = [:]
                        var index = 0
                        while ContinuousClock.now < deadline {
                            let email = "flood-\(runID)-\(worker)-\(index)@example.com"
                            index += 1
                            let status = try await post("/auth/email/signup", ["email": email, "password": password]).status
                            statuses[status, default: 0] += 1
                            // Still far more sign-ups than two hashing threads take: hashing stays saturated.
                            if status == 503 && !ignoreRetryAfter { try await Task.sleep(for: .seconds(1)) }
                        }
                        return statuses
                    }
                }
                return try await group.reduce(into: [:]) { $0.merge($1, uniquingKeysWith: +) }
            }
        }
        let logins = try await withThrowingTaskGroup(of: ([Duration], [UInt: Int]).self) { group in
            for worker in 0..<signers {
                group.addTask {
                    var latencies: [Duration] = []
                    var statuses: [UInt: Int] = [:]
                    var index = worker
                    // Sign-ins start once the flood has filled the queue.
                    try await Task.sleep(for: .seconds(2))
                    while ContinuousClock.now < deadline {
                        let answer = try await post("/auth/email/login", ["email": emails[index % emails.count], "password": password])
                        index += 1
                        statuses[answer.status, default: 0] += 1
                        if answer.status == 200 { latencies.append(answer.elapsed) }
                    }
                    return (latencies, statuses)
                }
            }
            return try await group.reduce(into: ([Duration](), [UInt: Int]())) {
                $0.0 += $1.0
                $0.1.merge($1.1, uniquingKeysWith: +)
            }
        }
        let signups = try await flood.value
        let elapsed = ContinuousClock.now - started
        try await http.shutdown()

        let latencies = Latencies(logins.0)
        func describe(_ statuses: [UInt: Int]) -> String {
            statuses.sorted { $0.key < $1.key }.map { "\($0.key)x\($0.value)" }.joined(separator: ",")
        }
        print(
            String(
                format:
                    "bench login-flood flooders=%d%@ signers=%d seconds=%.1f login_ok=%d login_p50_ms=%.0f login_p99_ms=%.0f login_max_ms=%.0f",
                flooders, ignoreRetryAfter ? " (ignoring Retry-After)" : "", signers, elapsed.inSeconds, latencies.count,
                latencies.percentile(0.5), latencies.percentile(0.99), latencies.longest)
                + " login_statuses=\(describe(logins.1)) signup_statuses=\(describe(signups))")
    }
}
