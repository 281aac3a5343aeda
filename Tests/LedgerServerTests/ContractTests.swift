import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

@Suite("HTTP responses match openapi.yaml", .timeLimit(.minutes(10)))
struct ContractTests {
    @Test("every answer of a scripted session is documented and matches its schema")
    func scriptedSession() async throws {
        try await TestPostgres.withDatabase { db in
            let app = Application(router: buildRouter(try makeServices(url: db.url, client: db.client, clock: db.clock)))
            try await app.test(.router) { client in
                for uri in ["/healthz", "/readyz"] {
                    try await client.execute(uri: uri, method: .get) { expectConforms($0, "get", uri) }
                }
                let signUp = jsonBody(["email": "ana@example.com", "password": "violet-harbor-91", "handle": "ana_k"])
                var access = ""
                var refresh = ""
                try await client.execute(uri: "/auth/email/signup", method: .post, headers: jsonHeaders, body: signUp) { response in
                    expectConforms(response, "post", "/auth/email/signup")
                    let body = try json(response)
                    access = body["access_token"] as? String ?? ""
                    refresh = body["refresh_token"] as? String ?? ""
                }
                let otherBodies: [ByteBuffer] = [
                    signUp,
                    jsonBody(["email": "x", "password": "1"]),
                    ByteBuffer(string: "{"),
                    ByteBuffer(string: "{\"email\":\"" + String(repeating: "a", count: 70_000) + "\"}"),
                ]
                for body in otherBodies {
                    try await client.execute(uri: "/auth/email/signup", method: .post, headers: jsonHeaders, body: body) {
                        expectConforms($0, "post", "/auth/email/signup")
                    }
                }
                for password in ["violet-harbor-91", "wrong-password"] {
                    try await client.execute(
                        uri: "/auth/email/login", method: .post, headers: jsonHeaders,
                        body: jsonBody(["email": "ana@example.com", "password": password])
                    ) { expectConforms($0, "post", "/auth/email/login") }
                }
                for token in [refresh, refresh] {
                    try await client.execute(
                        uri: "/auth/token/refresh", method: .post, headers: jsonHeaders, body: jsonBody(["refresh_token": token])
                    ) { expectConforms($0, "post", "/auth/token/refresh") }
                }
                try await client.execute(
                    uri: "/auth/email/login", method: .post, headers: jsonHeaders,
                    body: jsonBody(["email": "ana@example.com", "password": "violet-harbor-91"])
                ) { response in
                    access = try json(response)["access_token"] as? String ?? ""
                }
                for uri in ["/me", "/me/auth-methods"] {
                    try await client.execute(uri: uri, method: .get, headers: bearer(access)) { expectConforms($0, "get", uri) }
                    try await client.execute(uri: uri, method: .get) { expectConforms($0, "get", uri) }
                }
                try await client.execute(uri: "/auth/logout", method: .post, headers: bearer(access)) {
                    expectConforms($0, "post", "/auth/logout")
                }
                try await client.execute(uri: "/auth/logout", method: .post, headers: bearer(access)) {
                    expectConforms($0, "post", "/auth/logout")
                }
                try await client.execute(uri: "/openapi.yaml", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "application/yaml; charset=utf-8")
                    expectConforms(response, "get", "/openapi.yaml")
                    #expect(String(buffer: response.body).hasPrefix("openapi: 3.1.0"))
                }
                // The text form (what openapi-python-client reads): the same bytes.
                try await client.execute(uri: "/openapi.yaml", method: .get, headers: [.accept: "text/plain"]) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "text/plain; charset=utf-8")
                    #expect(response.headers[HTTPField.Name("Vary")!] == "Accept")
                    expectConforms(response, "get", "/openapi.yaml")
                    #expect(String(buffer: response.body).hasPrefix("openapi: 3.1.0"))
                }
            }
        }
    }

    @Test("the checker itself catches a response that breaks the document")
    func checkerCatchesDrift() {
        let document = OpenAPIDocument.shared
        #expect(!document.problems(path: "/healthz", method: "get", status: 200, body: Data(#"{"status":1}"#.utf8)).isEmpty)
        #expect(!document.problems(path: "/healthz", method: "get", status: 418, body: Data()).isEmpty)
        #expect(!document.problems(path: "/nowhere", method: "get", status: 200, body: Data()).isEmpty)
        #expect(!document.problems(path: "/me", method: "get", status: 200, body: Data(#"{"account_id":"x"}"#.utf8)).isEmpty)
        #expect(document.problems(path: "/healthz", method: "get", status: 200, body: Data(#"{"status":"ok"}"#.utf8)).isEmpty)
        // YAML: the served document parses to an object with `openapi`, `info` and `paths`.
        #expect(!document.problems(path: "/openapi.yaml", method: "get", status: 200, body: Data("just text".utf8)).isEmpty)
        #expect(
            document.problems(path: "/openapi.yaml", method: "get", status: 200, body: Data("openapi: 3.1.0\ninfo: {}\npaths: {}\n".utf8))
                .isEmpty)
    }
}

@Suite("HTTP: countries")
struct CountriesEndpointTests {
    @Test("GET /countries orders by the locale and matches the document")
    func countries() async throws {
        try await TestPostgres.withDatabase { db in
            let app = Application(router: buildRouter(try makeServices(url: db.url, client: db.client, clock: db.clock)))
            try await app.test(.router) { client in
                try await client.execute(uri: "/countries?locale=de-DE", method: .get) { response in
                    expectConforms(response, "get", "/countries")
                    let list = try json(response)["countries"] as? [[String: Any]] ?? []
                    #expect(list.count == 245)
                    #expect(list.prefix(4).map { $0["iso"] as? String ?? "" } == ["DE", "GE", "US", "GB"])
                    #expect(list.first?["dial_code"] as? String == "+49")
                    // The UK's 10 digits, 11 when typed with its trunk prefix (the seeds' "UK: 10-11").
                    let uk = try #require(list.first { $0["iso"] as? String == "GB" })
                    #expect(uk["national_lengths"] as? [Int] == [10] && uk["national_prefix"] as? String == "0")
                    #expect(list.contains { $0["national_prefix"] is NSNull })
                }
                try await client.execute(uri: "/countries", method: .get, headers: [.acceptLanguage: "en-US,en;q=0.9"]) { response in
                    let list = try json(response)["countries"] as? [[String: Any]] ?? []
                    #expect(list.first?["iso"] as? String == "US")
                }
            }
        }
    }

    /// `Accept-Language: ;` used to crash the process (an index out of range), found by scripts/fuzz.sh.
    @Test("a malformed Accept-Language is read as far as it names a language, and never crashes the service")
    func malformedAcceptLanguage() async throws {
        try await TestPostgres.withDatabase { db in
            let app = Application(router: buildRouter(try makeServices(url: db.url, client: db.client, clock: db.clock)))
            try await app.test(.router) { client in
                let expectedFirst = [
                    ";": "GE", ";;": "GE", ";q=0.5": "GE", ",;": "GE", " ; ": "GE", "*": "GE", "": "GE", ",": "GE",
                    ";q=1, de-DE": "DE", "*, de-DE;q=0.5": "DE", ", de-DE": "DE",
                ]
                for (header, iso) in expectedFirst.sorted(by: { $0.key < $1.key }) {
                    try await client.execute(uri: "/countries", method: .get, headers: [.acceptLanguage: header]) { response in
                        expectConforms(response, "get", "/countries")
                        #expect(response.status == .ok, "Accept-Language: \(header)")
                        let list = try json(response)["countries"] as? [[String: Any]] ?? []
                        #expect(list.first?["iso"] as? String == iso, "Accept-Language: \(header)")
                    }
                }
            }
        }
    }
}
