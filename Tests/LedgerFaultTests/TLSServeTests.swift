import Foundation
import LedgerCore
import LedgerTestSupport
import Testing

/// curl, a real HTTPS client: what it got from one request to `ledger serve`.
struct CurlReply {
    /// 0 when no HTTP answer came (a handshake refused).
    let status: Int
    /// `2` or `1.1`.
    let version: String
    let headers: [String: String]
    let body: String

    /// `https://localhost:port/path`, trusting `caFile` only, over HTTP/2 (or 1.1 when asked).
    static func get(
        port: Int, _ path: String, trusting caFile: String, http1: Bool = false, bearer: String? = nil
    ) async throws -> CurlReply {
        let bodyFile = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: bodyFile) }
        var arguments = [
            "-s", "--max-time", "30", "--cacert", caFile, http1 ? "--http1.1" : "--http2", "-D", "-", "-o", bodyFile, "-w",
            "\n%{http_code} %{http_version}", "https://localhost:\(port)\(path)",
        ]
        if let bearer { arguments += ["-H", "Authorization: Bearer \(bearer)"] }
        // On a thread of its own: Swift concurrency's few threads stay free (`ChildProcess`).
        let command = arguments
        let output = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try ChildProcess.run("/usr/bin/curl", command).output }) }
        }
        let lines = output.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let last = (lines.last ?? "").split(separator: " ")
        var headers: [String: String] = [:]
        for line in lines.dropLast() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return CurlReply(
            status: Int(last.first ?? "") ?? 0, version: last.count > 1 ? String(last[1]) : "", headers: headers,
            body: (try? String(contentsOfFile: bodyFile, encoding: .utf8)) ?? "")
    }
}

@Suite("ledger serve: HTTPS with HTTP/1.1 and HTTP/2, reloaded on SIGHUP", .timeLimit(.minutes(10)))
struct TLSServeTests {
    /// Where serve reads the certificate and key, in a directory removed after `body`.
    func withFiles(_ body: (_ files: (certificate: String, key: String)) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await body((directory + "/fullchain.pem", directory + "/privkey.pem"))
    }

    /// Puts `pair`'s certificate (and `key`'s key, when given) where serve reads them, each file
    /// replaced whole, as a renewal does.
    func install(_ pair: TestCertificate, key: TestCertificate? = nil, at files: (certificate: String, key: String)) throws {
        try Data(contentsOf: URL(fileURLWithPath: pair.certificatePath)).write(
            to: URL(fileURLWithPath: files.certificate), options: .atomic)
        try Data(contentsOf: URL(fileURLWithPath: (key ?? pair).keyPath)).write(to: URL(fileURLWithPath: files.key), options: .atomic)
    }

    /// `SIGHUP`, without waiting for an exit that does not come (`LedgerProcess.kill` reaps).
    func hangUp(_ process: LedgerProcess) { _ = Glibc.kill(process.pid, SIGHUP) }

    func localhost() throws -> TestCertificate { try TestCertificate.make(names: ["DNS:localhost"]) }

    @Test(
        "with LEDGER_TLS_* serve speaks HTTPS, HTTP/2 and HTTP/1.1, with HSTS; SIGHUP serves a renewed certificate to new connections without dropping a request under way, and refuses a key that is not the certificate's"
    )
    func servesAndReloads() async throws {
        try await TestPostgres.withDatabase { db in
            try await withFiles { files in
                let first = try localhost()
                try install(first, at: files)
                let server = try ServerUnderTest(
                    databaseURL: db.url,
                    environment: ["LEDGER_TLS_CERT_FILE": files.certificate, "LEDGER_TLS_KEY_FILE": files.key, "LOG_LEVEL": "info"])
                let process = try LedgerProcess(["serve", "--host", "127.0.0.1"], environment: server.environment)
                defer { Task { await process.kill(SIGTERM) } }
                func get(_ path: String = "/healthz", trusting pair: TestCertificate, http1: Bool = false, bearer: String? = nil)
                    async throws -> CurlReply
                {
                    try await CurlReply.get(port: server.port, path, trusting: pair.certificatePath, http1: http1, bearer: bearer)
                }
                var ready = false
                for _ in 0..<300 where !ready {
                    let r = try await get("/readyz", trusting: first)
                    ready = r.status == 200
                    if !ready { try await Task.sleep(for: .milliseconds(100)) }
                }
                #expect(ready, "\(process.output.suffix(2000))")
                let h2 = try await get(trusting: first)
                #expect(h2.status == 200 && h2.version == "2" && h2.headers["strict-transport-security"] == "max-age=31536000", "\(h2)")
                let h1 = try await get(trusting: first, http1: true)
                #expect(h1.status == 200 && h1.version == "1.1" && h1.headers["strict-transport-security"] == "max-age=31536000")
                #expect(!process.output.contains("TLS must end in front"))

                // A long poll under way on a connection made with the first certificate.
                let key = try await server.createKey(scopes: "events:read")
                let tail = try await get("/events?limit=1000", trusting: first, bearer: key)
                let cursor = try #require(
                    (try JSONSerialization.jsonObject(with: Data(tail.body.utf8)) as? [String: Any])?["next_cursor"] as? String)
                let started = ContinuousClock.now
                let underWay = Task { try await get("/events?after=\(cursor)&wait=10", trusting: first, bearer: key) }
                // Time for curl to start and finish its handshake with the first certificate, on
                // a loaded machine too (a fresh-clone run once took over a second).
                try await Task.sleep(for: .seconds(4))

                // Renewed: new connections get the second certificate after SIGHUP.
                let renewed = try localhost()
                try install(renewed, at: files)
                hangUp(process)
                var served = false
                for _ in 0..<100 where !served {
                    served = try await get(trusting: renewed).status == 200
                    if !served { try await Task.sleep(for: .milliseconds(100)) }
                }
                #expect(served, "\(process.output.suffix(2000))")
                #expect(try await get(trusting: first).status == 0)
                let finished = try await underWay.value
                #expect(finished.status == 200 && ContinuousClock.now - started >= .seconds(5), "\(finished)")

                // A key that is not the certificate's: refused, logged, and the renewed pair stays.
                try install(try localhost(), key: try localhost(), at: files)
                hangUp(process)
                for _ in 0..<100 where !process.output.contains("tls: reload refused") { try await Task.sleep(for: .milliseconds(100)) }
                #expect(process.output.contains("tls: reload refused"), "\(process.output.suffix(2000))")
                #expect(!process.output.contains("PRIVATE KEY"))
                #expect(try await get(trusting: renewed).status == 200)
                await process.kill(SIGTERM)
                #expect(process.waitForExit() == 0)
                try await server.shutdown()
            }
        }
    }

    @Test(
        "a TLS file missing or a key not matching stops serve at start with one line; plain HTTP outside --dev says TLS must end in front, and survives SIGHUP"
    )
    func refusedAtStart() async throws {
        try await TestPostgres.withDatabase { db in
            try await withFiles { files in
                let server = try ServerUnderTest(databaseURL: db.url)
                let (alone, onlyOne) = try await LedgerProcess.run(
                    ["serve"], environment: server.environment.merging(["LEDGER_TLS_CERT_FILE": files.certificate]) { $1 })
                #expect(alone == 2 && onlyOne.contains("LEDGER_TLS_CERT_FILE and LEDGER_TLS_KEY_FILE go together"), "\(onlyOne)")
                let both = ["LEDGER_TLS_CERT_FILE": files.certificate, "LEDGER_TLS_KEY_FILE": files.key]
                let (missing, said) = try await LedgerProcess.run(["serve"], environment: server.environment.merging(both) { $1 })
                #expect(missing != 0 && said.contains("LEDGER_TLS_CERT_FILE (\(files.certificate)) is not a readable PEM"), "\(said)")
                try install(try localhost(), key: try localhost(), at: files)
                let (mismatched, told) = try await LedgerProcess.run(["serve"], environment: server.environment.merging(both) { $1 })
                #expect(mismatched != 0 && told.contains("is not the key of LEDGER_TLS_CERT_FILE"), "\(told)")
                #expect(!told.contains("PRIVATE KEY"))
                // Plain HTTP, not in development: said at start.
                try await server.start()
                let process = try #require(server.process)
                #expect(process.output.contains("TLS must end in front of this service"))
                // SIGHUP without TLS: taken, not the signal's default (the end of the service).
                hangUp(process)
                try await Task.sleep(for: .milliseconds(500))
                #expect(try await server.send("GET", "/readyz").status == 200, "\(process.output.suffix(1000))")
                try await server.shutdown()
            }
        }
    }
}
