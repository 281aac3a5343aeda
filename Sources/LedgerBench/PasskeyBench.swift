import ArgumentParser
import AsyncHTTPClient
import Foundation
import LedgerApp
import LedgerCore
import LedgerPostgres
import LedgerWebAuthn
import LedgerWebAuthnTesting
import NIOCore

/// `ledger-bench passkeys`: passkey sign-ins (options, an ES256 assertion from a software
/// authenticator, login: the whole ceremony over HTTP) at `--connections` concurrent clients for
/// `--seconds`, then password sign-ins of the same accounts for as long, in the same run. One
/// account per connection, so each passkey's counter grows in order. Run against a service
/// whose relying party is `localhost` / `http://localhost:PORT` and that trusts the loopback
/// proxy; the set-up reads each account's re-auth link from the outbox (`DATABASE_URL`).
struct PasskeyBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passkeys", abstract: "Passkey sign-ins per second beside password sign-ins, in one run.")

    @OptionGroup var database: BenchDatabase
    @Option(help: "The service's base URL.") var url = "http://127.0.0.1:8080"
    @Option(help: "The origin the authenticator signs for (LEDGER_WEBAUTHN_ORIGINS).") var origin = "http://localhost:8080"
    @Option(help: "The relying party id (LEDGER_WEBAUTHN_RP_ID).") var rpID = "localhost"
    @Option(help: "Concurrent clients, each with an account of its own.") var connections = 64
    @Option(help: "Seconds each kind of sign-in runs.") var seconds = 10

    static let password = "violet-harbor-91"

    func run() async throws {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections + 4)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let outbox = PostgresClient(
            configuration: .init(url: try database.requiredURL(try LedgerConfiguration.fromEnvironment()), maximumConnections: 2))
        let client = BenchHTTP(http: http, url: url)
        let authenticator = SoftAuthenticator()
        let runID = UUID().uuidString.prefix(8).lowercased()
        var accounts: [(email: String, credential: SoftCredential)] = []
        for index in 0..<connections {
            let email = "passkey-\(runID)-\(index)@example.com"
            accounts.append((email, try await register(email, client: client, outbox: outbox, authenticator: authenticator)))
        }
        await outbox.shutdown()

        let passkeys = try await measure("passkey sign-in (options + ES256 assertion + login)", accounts) { account in
            let (_, options) = try await client.post("/auth/passkey/options", [:])
            guard let text = options["challenge"] as? String, let challenge = Base64URL.decode(text) else { return 0 }
            let assertion = authenticator.getAssertion(credential: account.credential, challenge: challenge, rpID: rpID, origin: origin)
            return try await client.post(
                "/auth/passkey/login", ["credential": try JSONSerialization.jsonObject(with: Data(assertion.jsonBytes()))]
            ).0
        }
        let passwords = try await measure("password sign-in (scrypt)", accounts) { account in
            try await client.post("/auth/email/login", ["email": account.email, "password": Self.password]).0
        }
        print(String(format: "passkey / password sign-ins per second: %.2f", passkeys / passwords))
        try await http.shutdown()
    }

    /// An account with a verified address and one passkey, registered as an app would.
    func register(_ email: String, client: BenchHTTP, outbox: PostgresClient, authenticator: SoftAuthenticator) async throws
        -> SoftCredential
    {
        let (_, session) = try await client.post("/auth/email/signup", ["email": email, "password": Self.password])
        guard let access = session["access_token"] as? String else { throw ValidationError("sign-up failed: \(session)") }
        let bearer = ["Authorization": "Bearer \(access)"]
        let grant = try await client.emailLinkGrant(email: email, access: access, outbox: outbox)
        let reauth = bearer.merging(["X-Reauth-Token": grant]) { a, _ in a }
        let (_, options) = try await client.post("/me/passkeys/options", [:], headers: reauth)
        guard let challengeText = options["challenge"] as? String, let challenge = Base64URL.decode(challengeText),
            let user = options["user"] as? [String: Any], let handleText = user["id"] as? String, let handle = Base64URL.decode(handleText)
        else { throw ValidationError("no registration options: \(options)") }
        let made = authenticator.makeCredential(rpID: rpID, origin: origin, challenge: challenge, userHandle: handle, signCount: 1)
        let (status, body) = try await client.post(
            "/me/passkeys", ["credential": try JSONSerialization.jsonObject(with: Data(made.response.jsonBytes()))], headers: reauth)
        guard status == 201 else { throw ValidationError("registration answered \(status): \(body)") }
        return made.credential
    }

    /// Runs `signIn` for `seconds` on one task per account; prints and returns sign-ins per second.
    func measure(
        _ label: String, _ accounts: [(email: String, credential: SoftCredential)],
        _ signIn: @escaping @Sendable ((email: String, credential: SoftCredential)) async throws -> UInt
    ) async throws -> Double {
        let deadline = ContinuousClock.now + .seconds(seconds)
        let started = ContinuousClock.now
        let results = try await withThrowingTaskGroup(of: [(UInt, Duration)].self) { group in
            for account in accounts {
                group.addTask {
                    var results: [(UInt, Duration)] = []
                    while ContinuousClock.now < deadline {
                        let sent = ContinuousClock.now
                        results.append((try await signIn(account), ContinuousClock.now - sent))
                    }
                    return results
                }
            }
            return try await group.reduce(into: [(UInt, Duration)]()) { $0 += $1 }
        }
        let elapsed = (ContinuousClock.now - started).inSeconds
        let latencies = Latencies(results.map(\.1))
        let statuses = Dictionary(grouping: results, by: \.0).mapValues(\.count).sorted { $0.key < $1.key }
            .map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        let rate = Double(results.filter { $0.0 == 200 }.count) / elapsed
        print(
            String(
                format: "%@: %.0f/s at %d connections; p50 %.2f ms, p99 %.2f ms; statuses %@", label, rate, connections,
                latencies.percentile(0.5), latencies.percentile(0.99), statuses))
        return rate
    }
}

/// JSON over HTTP to the service under test, each request from an address of its own (the
/// service trusts the loopback proxy), retrying `503` as a client told to wait would.
struct BenchHTTP: Sendable {
    let http: HTTPClient
    let url: String

    func post(_ path: String, _ body: [String: Any], headers: [String: String] = [:]) async throws -> (UInt, [String: Any]) {
        var request = HTTPClientRequest(url: url + path)
        request.method = .POST
        request.headers.add(name: "X-Forwarded-For", value: benchClientAddress())
        request.headers.add(name: "Content-Type", value: "application/json")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: body)))
        for _ in 0..<100 {
            let response = try await http.execute(request, timeout: .seconds(60))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            if response.status.code == 503 {
                try await Task.sleep(for: .milliseconds(200))
                continue
            }
            let object = (try? JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: Any] ?? [:]
            return (response.status.code, object)
        }
        throw ValidationError("\(path) kept answering 503")
    }

    /// A re-auth grant by the emailed link, as the owner would earn it (it also verifies the
    /// address, which `add_method` and `manage_mfa` need of a grant): the link's token is read
    /// from the outbox, where it waits for a delivery webhook nobody answers.
    func emailLinkGrant(email: String, access: String, outbox: PostgresClient) async throws -> String {
        _ = try await post("/auth/reauth/email-link", [:], headers: ["Authorization": "Bearer \(access)"])
        for _ in 0..<100 {
            let rows = try await outbox.query(
                "SELECT token FROM outbox WHERE recipient = $1 AND template = 'reauth_link' ORDER BY created_at DESC LIMIT 1",
                [.text(email)])
            if rows.rowCount == 1, let token = rows[0].string(0) {
                let (_, grant) = try await post("/auth/reauth/email-link/confirm", ["token": token])
                guard let reauth = grant["reauth_token"] as? String else { throw ValidationError("no grant: \(grant)") }
                return reauth
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ValidationError("no re-auth link for \(email) in the outbox")
    }
}
