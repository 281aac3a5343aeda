import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerTestSupport
import Testing

@testable import LedgerServer

@Suite("HTTP: event metadata", .timeLimit(.minutes(10)))
struct EventMetadataTests {
    @Test("a request's events record its id, the client's hashed address, the user-agent class and the account as actor")
    func requestMetadata() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            let writer = try await services.apiKeys.create(name: "bookings", scopes: [.holdsWrite])
            try await Application(router: buildRouter(services)).test(.live) { client in
                var headers = jsonHeaders
                headers[.userAgent] = "321Fit/4.2 (iPhone; iOS 18.1; Scale/3.00)"
                headers[HTTPField.Name("X-Request-Id")!] = "signup-7f3a"
                let access = try await client.execute(
                    uri: "/auth/email/signup", method: .post, headers: headers,
                    body: jsonBody(["email": "ana@example.com", "password": "violet-harbor-91"])
                ) { response in
                    #expect(response.status == .created)
                    return try json(response)["access_token"] as? String ?? ""
                }
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let signup = try await services.eventStore.readStream(try #require(UUID(uuidString: accountID)))
                #expect(signup.count >= 3)
                let ipHash = try #require(signup.first?.metadata.ipHash)
                for event in signup {
                    #expect(event.metadata.actor == "account:\(accountID)")
                    #expect(event.metadata.correlationID == "signup-7f3a")
                    #expect(event.metadata.userAgentClass == "ios")
                    #expect(event.metadata.ipHash == ipHash)
                    #expect(!event.metadataJSON.contains("127.0.0.1") && !event.metadataJSON.contains("iPhone"))
                }
                #expect(ipHash.count == 32 && Hex.decode(ipHash) != nil)

                // A service's call names its API key as the actor.
                let hold = try await call(
                    client, .put, "/accounts/\(accountID)/holds/d1", ["kind": "dispute"], token: writer.key,
                    path: "/accounts/{id}/holds/{ref}")
                #expect(hold.status == .ok)
                let placed = try await services.eventStore.readStream(try #require(UUID(uuidString: accountID))).last
                #expect(placed?.type == "hold.placed")
                #expect(placed?.metadata.actor == "service:\(writer.id.lowercased)")
                #expect(placed?.metadata.correlationID != "signup-7f3a" && placed?.metadata.correlationID?.isEmpty == false)
                #expect(placed?.metadata.ipHash == ipHash)
            }
        }
    }

    @Test("user agents fall into ios, android, web or other")
    func userAgentClasses() {
        let cases: [(String?, String?)] = [
            ("321Fit/4.2 (iPhone; iOS 18.1; Scale/3.00)", "ios"), ("Handz/1 CFNetwork/1490.0.4 Darwin/23.2.0", "ios"),
            ("okhttp/4.12.0", "android"), ("Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8)", "android"),
            ("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) AppleWebKit/605.1.15", "web"),
            ("curl/8.5.0", "other"), ("", nil), (nil, nil),
        ]
        for (userAgent, expected) in cases {
            #expect(EventMetadataMiddleware.userAgentClass(userAgent) == expected, "\(userAgent ?? "nil")")
        }
    }

    @Test("the address hash is keyed per account: stable within one account, different across accounts, gone with the key")
    func addressHash() async throws {
        let key = try DataKey.generate()
        let address = try #require(IPAddress.bytes("198.51.100.7"))
        let other = try #require(IPAddress.bytes("198.51.100.8"))
        let hash = key.addressHash(address)
        #expect(hash == key.addressHash(address))
        #expect(hash != key.addressHash(other))
        #expect(hash != (try DataKey.generate()).addressHash(address))
        #expect(hash.count == 16)
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            try await Application(router: buildRouter(services)).test(.live) { client in
                var hashes: [String] = []
                for email in ["ana@example.com", "bo@example.com"] {
                    let access = try await signUp(client, email: email)
                    let me = try await call(client, .get, "/me", token: access)
                    let accountID = try #require(me.string("account_id").flatMap(UUID.init(uuidString:)))
                    let events = try await services.eventStore.readStream(accountID)
                    hashes.append(try #require(events.first?.metadata.ipHash))
                }
                // One address, two accounts: nothing links their histories.
                #expect(hashes[0] != hashes[1])
            }
        }
    }
}
