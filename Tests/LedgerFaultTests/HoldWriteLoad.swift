import Foundation
import Synchronization

/// One write of the load: a hold with a ref of its own. `PUT` of the same hold again is a retry
/// that must store nothing new.
struct HoldWrite: Hashable, Sendable {
    let accountID: String
    let ref: String

    var path: String { "/accounts/\(accountID)/holds/\(ref)" }
    var body: [String: Any] { ["kind": "upcoming_session", "title": "Session \(ref)"] }
}

/// Concurrent writers putting holds through the HTTP API, keeping count of what was sent and
/// what the server acknowledged.
final class HoldWriteLoad: Sendable {
    struct Tally: Sendable {
        var attempted: [HoldWrite] = []
        var acknowledged: Set<HoldWrite> = []
        var unavailable = 0
        /// Answers that are never acceptable, even mid-fault (a `500`, say).
        var unexpected: [String] = []
        var connectionErrors = 0
    }

    let server: ServerUnderTest
    let apiKey: String
    let accounts: [String]
    private let tally = Mutex(Tally())
    private let stopped = Atomic<Bool>(false)

    init(server: ServerUnderTest, apiKey: String, accounts: [String]) {
        self.server = server
        self.apiKey = apiKey
        self.accounts = accounts
    }

    var snapshot: Tally { tally.withLock { $0 } }

    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Runs `writers` writers until `stop()`, or until a writer cannot reach the server when
    /// `untilUnreachable` (the server was killed).
    func run(writers: Int, untilUnreachable: Bool) async {
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var number = 0
                    while !self.stopped.load(ordering: .relaxed) {
                        let write = HoldWrite(
                            accountID: self.accounts[(writer + number) % self.accounts.count], ref: "w\(writer)-\(number)")
                        number += 1
                        self.tally.withLock { $0.attempted.append(write) }
                        do {
                            let reply = try await self.server.send("PUT", write.path, json: write.body, token: self.apiKey)
                            self.tally.withLock { tally in
                                switch reply.status {
                                case 200: tally.acknowledged.insert(write)
                                case 503: tally.unavailable += 1
                                default: tally.unexpected.append("\(reply.status): \(String(decoding: reply.body, as: UTF8.self))")
                                }
                            }
                            if reply.status == 503 { try? await Task.sleep(for: .milliseconds(20)) }
                        } catch {
                            self.tally.withLock { $0.connectionErrors += 1 }
                            if untilUnreachable { return }
                            try? await Task.sleep(for: .milliseconds(20))
                        }
                    }
                }
            }
        }
    }

    /// Waits until the server has acknowledged at least `count` writes in all.
    func waitForAcknowledgements(_ count: Int, timeout: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + timeout
        while snapshot.acknowledged.count < count {
            guard ContinuousClock.now < deadline else {
                throw FaultRunFailure(
                    "only \(snapshot.acknowledged.count) of \(count) writes acknowledged; unexpected: \(snapshot.unexpected.prefix(3))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Sends every attempted write again, acknowledged or not, as a client retrying after a
    /// fault would; each must now succeed.
    func retryAll() async throws {
        for write in snapshot.attempted {
            let reply = try await server.send("PUT", write.path, json: write.body, token: apiKey)
            guard reply.status == 200 else { throw FaultRunFailure("retry of \(write.ref) answered \(reply.status)") }
        }
    }

    /// How many `hold.placed` events each ref has in the accounts' audited histories.
    func recordedHolds(auditKey: String) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for account in accounts {
            let reply = try await server.send("GET", "/accounts/\(account)/events", token: auditKey)
            guard reply.status == 200, let events = reply.json?["events"] as? [[String: Any]] else {
                throw FaultRunFailure("the audit history of \(account) answered \(reply.status)")
            }
            for event in events where event["type"] as? String == "hold.placed" {
                guard let ref = (event["data"] as? [String: Any])?["ref"] as? String else { continue }
                counts["\(account)/\(ref)", default: 0] += 1
            }
        }
        return counts
    }
}

struct FaultRunFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
