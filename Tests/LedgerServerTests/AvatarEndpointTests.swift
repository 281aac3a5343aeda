import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerCore
import LedgerServer
import LedgerTestSupport
import LedgerWorkers
import NIOCore
import Testing

@Suite("HTTP: the avatar and the initials tile", .timeLimit(.minutes(10)))
struct AvatarEndpointTests {
    /// `PUT /me/avatar` with `bytes`.
    func upload(
        _ client: some TestClientProtocol, _ bytes: [UInt8], token: String, type: String = "image/jpeg", address: String? = nil
    ) async throws -> Answer {
        var headers: HTTPFields = [.authorization: "Bearer \(token)", .contentType: type]
        if let address { headers[HTTPField.Name("X-Forwarded-For")!] = address }
        return try await client.execute(uri: "/me/avatar", method: .put, headers: headers, body: ByteBuffer(bytes: bytes)) { response in
            expectConforms(response, "put", "/me/avatar")
            return Answer(
                status: response.status, body: response.body.readableBytes == 0 ? [:] : try json(response), headers: response.headers)
        }
    }

    /// `GET` of an avatar address (absolute, as `avatar_url` gives it): status, headers, body.
    func fetch(_ client: some TestClientProtocol, _ url: String, headers: HTTPFields = [:]) async throws -> (
        status: HTTPResponse.Status, headers: HTTPFields, body: [UInt8]
    ) {
        let path = String(url[try #require(url.range(of: "/avatars/"))!.lowerBound...])
        return try await client.execute(uri: path, method: .get, headers: headers) { response in
            expectConforms(response, "get", path.contains(".svg") ? "/avatars/{user_id}.svg" : "/avatars/{user_id}.jpg")
            return (response.status, response.headers, Array(buffer: response.body))
        }
    }

    @Test("a picture: uploaded, shown on /me, served without metadata; replaced, its old address gone; removed, the tile again")
    func uploadServeReplaceRemove() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let access = try await signUp(client, email: "nino@example.com")
                let tile = try #require(try await call(client, .get, "/me", token: access).string("avatar_url"))
                #expect(tile.hasPrefix("https://321.fit/avatars/usr_") && tile.hasSuffix(".svg"))

                let uploaded = try await upload(client, try ImageFixtures.bytes("photo-gps.jpg"), token: access)
                #expect(uploaded.status == .ok)
                let url = try #require(uploaded.string("avatar_url"))
                #expect(url.contains(".jpg?v=") && url.count == tile.count + 35)
                #expect(try await call(client, .get, "/me", token: access).string("avatar_url") == url)
                #expect(try await db.storedEventCount(type: "avatar.set") == 1)

                let served = try await fetch(client, url)
                #expect(served.status == .ok)
                #expect(served.headers[.contentType] == "image/jpeg" && served.headers[.cacheControl] == "private, max-age=86400")
                #expect(served.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
                #expect(served.body.starts(with: [0xFF, 0xD8, 0xFF]) && served.body.count < 200_000)
                for text in ["LedgerCam", "Exif", "GPS"] { #expect(!served.body.contains(Array(text.utf8)), "\(text)") }
                let etag = try #require(served.headers[.eTag])
                #expect(try await fetch(client, url, headers: [.ifNoneMatch: etag]).status == .notModified)
                // An API client asking for bytes gets the same bytes as bytes (docs/accounts.md "Avatars").
                let generic = try await fetch(client, url, headers: [.accept: "application/octet-stream"])
                #expect(generic.headers[.contentType] == "application/octet-stream" && generic.body == served.body)
                #expect(try await fetch(client, url, headers: [.accept: "image/jpeg, */*;q=0.1"]).headers[.contentType] == "image/jpeg")
                // Without its version, or with another, nothing.
                #expect(try await fetch(client, String(url.prefix { $0 != "?" })).status == .notFound)
                let version = String(url.suffix(32))
                let otherVersion = String(version.reversed()) == version ? String(repeating: "0", count: 32) : String(version.reversed())
                #expect(try await fetch(client, url.replacingOccurrences(of: version, with: otherVersion)).status == .notFound)

                // A PNG replaces it: the old address is gone.
                let replaced = try #require(
                    try await upload(client, try ImageFixtures.bytes("alpha.png"), token: access, type: "image/png").string("avatar_url"))
                #expect(replaced != url)
                #expect(try await fetch(client, url).status == .notFound)
                #expect(try await fetch(client, replaced).status == .ok)

                let removed = try await client.execute(uri: "/me/avatar", method: .delete, headers: bearer(access)) { response in
                    expectConforms(response, "delete", "/me/avatar")
                    return response.status
                }
                #expect(removed == .noContent)
                #expect(try await call(client, .get, "/me", token: access).string("avatar_url") == tile)
                #expect(try await fetch(client, replaced).status == .notFound)
                #expect(try await db.storedEventCount(type: "avatar.removed") == 1)
                // Removing none changes nothing.
                _ = try await call(client, .delete, "/me/avatar", token: access)
                #expect(try await db.storedEventCount(type: "avatar.removed") == 1)
            }
        }
    }

    @Test("the tile: two initials in any script, escaped, on the user id's colour; a silhouette without a name; 404 for no account")
    func initialsTile() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let access = try await signUp(client, email: "nino@example.com")
                let url = try #require(try await call(client, .get, "/me", token: access).string("avatar_url"))
                // No name and a handle the service gave: a head and shoulders, no letter.
                let silhouette = try await fetch(client, url)
                #expect(silhouette.status == .ok && silhouette.headers[.contentType] == "image/svg+xml; charset=utf-8")
                #expect(String(decoding: silhouette.body, as: UTF8.self).contains("<circle") == true)
                #expect(
                    silhouette.headers[HTTPField.Name("Content-Security-Policy")!]
                        == "default-src 'none'; style-src 'unsafe-inline'; sandbox")
                let asText = try await fetch(client, url, headers: [.accept: "text/plain"])
                #expect(asText.headers[.contentType] == "text/plain; charset=utf-8" && asText.body == silhouette.body)

                for (name, initials) in [("ნინო ბერიძე", "ნბ"), ("анна петрова", "АП"), ("<script>alert(1)</script>", "S"), ("Ana", "A")] {
                    _ = try await call(client, .patch, "/me/profile", ["display_name": name], token: access)
                    let svg = String(decoding: try await fetch(client, url).body, as: UTF8.self)
                    #expect(svg.contains(">\(initials)</text>"), "\(name): \(svg)")
                    #expect(!svg.contains("<script") && !svg.contains("alert"))
                }
                // A letter with a thousand combining marks on it: the tile keeps the letter alone.
                _ = try await call(
                    client, .patch, "/me/profile", ["display_name": "Z" + String(repeating: "\u{0301}", count: 99)], token: access)
                #expect(String(decoding: try await fetch(client, url).body, as: UTF8.self).contains(">Z</text>"))
                _ = try await call(client, .patch, "/me/profile", ["display_name": "Tom & <b>Jerry</b>"], token: access)
                #expect(String(decoding: try await fetch(client, url).body, as: UTF8.self).contains(">TB</text>"))

                for missing in ["/avatars/usr_0000000000.svg", "/avatars/nobody.svg", "/avatars/usr_0000000000.jpg?v=1", "/avatars/x.png"] {
                    #expect(try await fetch(client, missing).status == .notFound, "\(missing)")
                }
            }
        }
    }

    @Test("refused: not an image (GIF, SVG, a fake header, a bomb) 415; over 5 MiB 413; another type 415; and nothing is stored")
    func refusals() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let access = try await signUp(client, email: "nino@example.com")
                for name in ["tiny.gif", "page.svg", "fake.jpg", "bomb.png", "wide.jpg", "truncated.jpg"] {
                    let answer = try await upload(client, try ImageFixtures.bytes(name), token: access)
                    #expect(answer.status == .unsupportedMediaType && answer.string("error") == "unsupported_image", "\(name)")
                    #expect(answer.string("message") == "Choose a JPEG, PNG or WebP picture of at most 8000 × 8000 pixels.")
                }
                let html = try await upload(client, try ImageFixtures.bytes("photo-gps.jpg"), token: access, type: "text/html")
                #expect(html.status == .unsupportedMediaType && html.string("error") == "unsupported_image")
                // Over the JSON bodies' 64 KiB (a photo's usual size), and in the test client with no Content-Length: taken.
                let large = try await upload(
                    client, try ImageFixtures.bytes("photo-gps.jpg") + [UInt8](repeating: 0, count: 300_000), token: access)
                #expect(large.status == .ok, "\(large.body)")
                let huge = try await upload(client, [0xFF, 0xD8, 0xFF] + [UInt8](repeating: 0, count: 5 << 20), token: access)
                #expect(huge.status == .contentTooLarge && huge.string("error") == "payload_too_large")
                #expect(try await db.storedEventCount(type: "avatar.set") == 1)
                // Signed out, the token uploads nothing.
                try await client.execute(uri: "/auth/logout", method: .post, headers: bearer(access)) { #expect($0.status == .noContent) }
                #expect(try await upload(client, try ImageFixtures.bytes("alpha.png"), token: access).status == .unauthorized)
                #expect(try await db.storedEventCount(type: "avatar.set") == 1)
            }
        }
    }

    @Test("uploads are counted before the body is decoded: the account's eleventh in 15 minutes is 429, junk included")
    func accountUploadLimit() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db, behindProxy: true).test(.live) { client in
                let access = try await signUp(client, email: "nino@example.com")
                // From ten networks: the account's count, not a client's, refuses the eleventh.
                for index in 0..<10 {
                    #expect(
                        try await upload(client, Array("junk".utf8), token: access, address: "2001:db8:\(index)::1").status
                            == .unsupportedMediaType)
                }
                let refused = try await upload(client, try ImageFixtures.bytes("alpha.png"), token: access, address: "2001:db8:ff::1")
                #expect(refused.status == .tooManyRequests && refused.string("error") == "rate_limited")
                #expect(refused.headers[.retryAfter] != nil)
                #expect(try await db.storedEventCount(type: "avatar.set") == 0)
                // The window passes (and the access token with it: a new sign-in).
                db.clock.advance(by: 901)
                let again = try await logIn(client, email: "nino@example.com")
                #expect(
                    try await upload(client, try ImageFixtures.bytes("alpha.png"), token: again, address: "2001:db8:ff::1").status == .ok)
            }
        }
    }

    @Test("uploads are counted per client too, an IPv6 client by its /64: another address there is the same client")
    func clientUploadLimit() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db, behindProxy: true) { $0.policies.ipSignupLimit = 3 }.test(.live) { client in
                let access = try await signUp(client, email: "nino@example.com")
                for index in 1...3 {
                    #expect(
                        try await upload(client, Array("junk".utf8), token: access, address: "2001:db8:1::\(index)").status
                            == .unsupportedMediaType)
                }
                #expect(
                    try await upload(client, try ImageFixtures.bytes("alpha.png"), token: access, address: "2001:db8:1::99").status
                        == .tooManyRequests)
                #expect(
                    try await upload(client, try ImageFixtures.bytes("alpha.png"), token: access, address: "2001:db8:2::1").status == .ok)
            }
        }
    }

    @Test("sealed at rest: no byte run of the picture in any table; a deleted account's is not served; the purge leaves none")
    func sealedAndPurged() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            try await Application(router: buildRouter(services)).test(.router) { client in
                let access = try await signUp(client, email: "nino@example.com")
                let url = try #require(
                    try await upload(client, try ImageFixtures.bytes("photo-gps.jpg"), token: access).string("avatar_url"))
                // /me reads the projection on PostgreSQL: it names the same address.
                #expect(try await call(client, .get, "/me", token: access).string("avatar_url") == url)
                let picture = try await fetch(client, url).body
                #expect(picture.count > 4096)
                // A run from the middle of the JPEG (past its standard headers), as bytea shows it.
                let run = Hex.encode(Array(picture[2048..<2112]))
                #expect(try await db.client.rowsHolding(run) == 0)
                #expect(try await db.client.query("SELECT count(*) FROM avatars")[0].int(0) == 1)

                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                #expect(try await db.client.rowsHolding("avatar:" + accountID) == 1)
                let grant = try await emailLinkGrant(client, db, token: access)
                #expect(try await call(client, .delete, "/me", token: access, reauth: grant).status.code < 300)
                #expect(try await fetch(client, url).status == .notFound)
                #expect(
                    try await fetch(client, url.replacingOccurrences(of: ".jpg", with: ".svg").prefix { $0 != "?" }.description).status
                        == .notFound)
                db.clock.advance(by: services.configuration.policies.purgeDelay + 1)
                #expect(try await PurgeWorker(store: services.eventStore, clock: db.clock).purgeNext() == UUID(uuidString: accountID))
                #expect(try await db.client.query("SELECT count(*) FROM avatars")[0].int(0) == 0)
                #expect(try await db.client.rowsHolding(run) == 0)
                // The upload counter named after the account goes too.
                #expect(try await db.client.rowsHolding("avatar:" + accountID) == 0)
            }
        }
    }
}
