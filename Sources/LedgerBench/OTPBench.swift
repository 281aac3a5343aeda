import ArgumentParser
import AsyncHTTPClient
import Foundation
import Hummingbird
import LedgerCore
import NIOCore

/// `ledger-bench otp`: phone-code request + verify pairs per second against a running
/// service, over HTTP, as an app would do them. It receives the codes as the service's
/// delivery webhook (`LEDGER_DELIVERY_WEBHOOK_URL=http://127.0.0.1:<receiver-port>/deliveries`).
struct OTPBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "otp", abstract: "OTP request + verify pairs/s against a running service.")

    @Option(help: "The service's base URL.") var url = "http://127.0.0.1:8080"
    @Option(help: "Port to receive the service's deliveries on.") var receiverPort = 8089
    @Option(help: "Concurrent clients (HTTP connections).") var connections = 32
    @Option(help: "Seconds to measure.") var seconds = 15.0
    @Option(
        help:
            "`existing`: sign in to numbers that already have accounts (each client cycles through its own numbers); `new`: every pair signs up a new number."
    )
    var mode = "existing"
    @Option(help: "Numbers per client in `existing` mode.") var numbersPerClient = 32

    func run() async throws {
        guard mode == "existing" || mode == "new" else { throw ValidationError("--mode is existing or new") }
        let mailbox = CodeMailbox()
        let router = Router()
        router.post("/deliveries") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 65536)
            let message = try JSONDecoder().decode(Delivery.self, from: Data(buffer: body))
            if let code = message.code { await mailbox.deliver(code, to: message.to) }
            return .noContent
        }
        let receiver = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: receiverPort)))
        let receiverTask = Task { try await receiver.runService() }
        defer { receiverTask.cancel() }
        try await Task.sleep(for: .milliseconds(300))

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let client = PairClient(http: http, base: url, mailbox: mailbox)
        let runID = Int.random(in: 0..<100)

        func number(_ worker: Int, _ index: Int) -> String {
            // Georgia: +995 and 9 digits; one range per run and client.
            String(format: "+9955%02d%02d%04d", runID, worker, index % 10_000)
        }
        if mode == "existing" {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<connections {
                    group.addTask {
                        for index in 0..<numbersPerClient { try await client.pair(phone: number(worker, index)) }
                    }
                }
                try await group.waitForAll()
            }
        }
        await client.timings.reset()
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        let counts = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for worker in 0..<connections {
                group.addTask {
                    var pairs = 0
                    var failures = 0
                    var index = 0
                    while ContinuousClock.now < deadline {
                        let phone = mode == "new" ? number(worker, numbersPerClient + index) : number(worker, index % numbersPerClient)
                        index += 1
                        do {
                            try await client.pair(phone: phone)
                            pairs += 1
                        } catch {
                            failures += 1
                            if failures == 1 { FileHandle.standardError.write(Data("bench otp: a pair failed: \(error)\n".utf8)) }
                        }
                    }
                    return (pairs, failures)
                }
            }
            return try await group.reduce(into: (0, 0)) {
                $0.0 += $1.0
                $0.1 += $1.1
            }
        }
        try await http.shutdown()
        let elapsed = (ContinuousClock.now - start).inSeconds
        print(await client.timings.summary())
        print(
            String(
                format: "bench otp mode=%@ connections=%d seconds=%.1f pairs=%d failures=%d pairs_per_s=%.0f requests_per_s=%.0f",
                mode, connections, elapsed, counts.0, counts.1, Double(counts.0) / elapsed, Double(counts.0 * 2) / elapsed))
    }
}

/// One client's request → code → verify.
struct PairClient: Sendable {
    let http: HTTPClient
    let base: String
    let mailbox: CodeMailbox
    let timings = PhaseTimings()

    func pair(phone: String) async throws {
        // Each pair from its own address, as many phones would be; the service trusts the
        // loopback proxy's X-Forwarded-For in this run.
        let address = benchClientAddress()
        let started = ContinuousClock.now
        let requested = try await post(
            "/auth/phone/request-otp", ["phone": phone, "purpose": "sign_in"], expect: 202, forwardedFor: address)
        guard let requestID = requested["request_id"] as? String else { throw ValidationError("no request_id") }
        let answered = ContinuousClock.now
        let code = try await mailbox.code(for: phone)
        let delivered = ContinuousClock.now
        _ = try await post("/auth/phone/verify-otp", ["request_id": requestID, "code": code], expect: 200)
        await timings.add(request: answered - started, delivery: delivered - answered, verify: ContinuousClock.now - delivered)
    }

    func post(_ path: String, _ body: [String: String], expect status: UInt, forwardedFor: String? = nil) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: base + path)
        request.method = .POST
        if let forwardedFor { request.headers.add(name: "X-Forwarded-For", value: forwardedFor) }
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: body)))
        let response = try await http.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        guard response.status.code == status else {
            throw ValidationError("\(path) answered \(response.status.code): \(String(buffer: bytes))")
        }
        return (try JSONSerialization.jsonObject(with: Data(buffer: bytes)) as? [String: Any]) ?? [:]
    }
}

struct Delivery: Decodable {
    let to: String
    let code: String?
}

/// Codes by number, handed to whoever waits for them (they may arrive first).
actor CodeMailbox {
    private var codes: [String: String] = [:]
    private var waiters: [String: CheckedContinuation<String, any Error>] = [:]

    func deliver(_ code: String, to phone: String) {
        if let waiter = waiters.removeValue(forKey: phone) { waiter.resume(returning: code) } else { codes[phone] = code }
    }

    func code(for phone: String) async throws -> String {
        if let code = codes.removeValue(forKey: phone) { return code }
        return try await withCheckedThrowingContinuation { waiters[phone] = $0 }
    }
}

/// Mean time of each phase of a pair: the request's answer, the code's delivery, the verification.
actor PhaseTimings {
    private var request = Duration.zero, delivery = Duration.zero, verify = Duration.zero
    private var count = 0

    func add(request: Duration, delivery: Duration, verify: Duration) {
        self.request += request
        self.delivery += delivery
        self.verify += verify
        count += 1
    }

    func reset() {
        (request, delivery, verify, count) = (.zero, .zero, .zero, 0)
    }

    func summary() -> String {
        func ms(_ total: Duration) -> String {
            String(
                format: "%.1f",
                total.inMilliseconds / Double(max(count, 1)))
        }
        return "phases: request \(ms(request)) ms, delivery \(ms(delivery)) ms, verify \(ms(verify)) ms (mean of \(count))"
    }
}
