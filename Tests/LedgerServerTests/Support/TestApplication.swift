import Hummingbird
import LedgerApp
import LedgerServer
import LedgerTestSupport

/// The API on a test database, as `configure` sets it up. `behindProxy` trusts the loopback
/// as a proxy, so a test names each request's client with `X-Forwarded-For`.
func testApplication(
    _ db: TestDatabase, behindProxy: Bool = false, configure: (inout LedgerConfiguration) -> Void = { _ in }
) throws -> some ApplicationProtocol {
    Application(
        router: buildRouter(
            try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey) {
                if behindProxy { $0.trustedProxies = ["127.0.0.1/32", "::1/128"] }
                configure(&$0)
            }))
}
