import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JWTKit
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerApp
import LedgerCore
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

/// JWT access tokens (docs/api.md "Access tokens that other services verify"): signed with a
/// published key, checked offline by a JWT library, and on the service's own routes only while
/// their session lives; forged ones refused.
@Suite("HTTP: JWT access tokens", .timeLimit(.minutes(5)))
struct JWTAccessTokenTests {
    static let issuer = "https://id.321.fit"

    static func jwt(_ configuration: inout LedgerConfiguration) {
        configuration.accessTokenFormat = .jwt
        configuration.tokenIssuer = issuer
    }

    /// The service's key set, as a backend would fetch it.
    static func keySet(_ client: some TestClientProtocol) async throws -> (JWTKeyCollection, [[String: Any]]) {
        try await client.execute(uri: "/.well-known/jwks.json", method: .get) { response in
            #expect(response.status == .ok)
            expectConforms(response, "get", "/.well-known/jwks.json")
            #expect(response.headers[.cacheControl] == "public, max-age=300")
            let keys = try await JWTKeyCollection().add(jwksJSON: String(buffer: response.body))
            return (keys, try json(response)["keys"] as? [[String: Any]] ?? [])
        }
    }

    static func status(_ client: some TestClientProtocol, _ token: String) async throws -> HTTPResponse.Status {
        try await client.execute(uri: "/me", method: .get, headers: bearer(token)) { $0.status }
    }

    /// The header and claims of `token`, unverified.
    static func parts(_ token: String) throws -> (header: [String: Any], claims: [String: Any]) {
        let pieces = token.split(separator: ".").map(String.init)
        #expect(pieces.count == 3)
        func object(_ piece: String) throws -> [String: Any] {
            try JSONSerialization.jsonObject(with: Data(try #require(Base64URL.decode(piece)))) as? [String: Any] ?? [:]
        }
        return (try object(pieces[0]), try object(pieces[1]))
    }

    /// `header` and `claims` with `signature`, as a forger would put them together.
    static func assemble(_ header: [String: Any], _ claims: [String: Any], sign: ([UInt8]) throws -> [UInt8]) throws -> String {
        func encode(_ object: [String: Any]) throws -> String {
            Base64URL.encode(Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])))
        }
        let input = try encode(header) + "." + encode(claims)
        return input + "." + Base64URL.encode(try sign(Array(input.utf8)))
    }

    @Test("with jwt every session answers an ES256 at+jwt token that a JWT library verifies against the published key set")
    func verifiesOffline() async throws {
        try await TestPostgres.withDatabase { db in
            let app = try testApplication(db, configure: Self.jwt)
            try await app.test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let (header, _) = try Self.parts(access)
                #expect(header["alg"] as? String == "ES256")
                #expect(header["typ"] as? String == "at+jwt")
                let (keys, published) = try await Self.keySet(client)
                #expect(published.count == 1)
                #expect(published.first?["kid"] as? String == header["kid"] as? String)
                #expect(published.first.map { Set($0.keys) } == ["kty", "crv", "x", "y", "kid", "use", "alg"])

                let claims = try await keys.verify(access, as: AccessTokenClaims.self)
                #expect(claims.issuer == Self.issuer)
                #expect(claims.audience == "321fit")
                #expect(claims.clientID == "321fit-app")
                #expect(claims.methods == ["pwd"])
                #expect(claims.emailVerified == false)
                #expect(claims.expiresAt - claims.issuedAt == 900)
                #expect(claims.authTime == Int(db.clock.now().timeIntervalSince1970))
                let me = try await client.execute(uri: "/me", method: .get, headers: bearer(access)) { try json($0) }
                #expect(me["account_id"] as? String == claims.subject)
                #expect(try await Self.status(client, access) == .ok)
                // A backend's introspection takes it as it takes an opaque token.
                let (_, key) = try await APIKeys(client: db.client, clock: db.clock).create(name: "bookings", scopes: [.sessionsIntrospect])
                let introspection = try await client.execute(
                    uri: "/sessions/introspect", method: .post, headers: bearer(key), body: jsonBody(["token": access])
                ) { try json($0) }
                #expect(introspection["active"] as? Bool == true)
                #expect(introspection["session_id"] as? String == claims.sessionID)

                try await client.execute(uri: "/.well-known/openid-configuration", method: .get) { response in
                    expectConforms(response, "get", "/.well-known/openid-configuration")
                    let document = try json(response)
                    #expect(document["issuer"] as? String == Self.issuer)
                    #expect(document["jwks_uri"] as? String == Self.issuer + "/.well-known/jwks.json")
                }
                // The opaque token behind it is nowhere: the session keeps only its hash, the `jti`.
                let (_, rawClaims) = try Self.parts(access)
                #expect((rawClaims["jti"] as? String).flatMap(Base64URL.decode)?.count == 32)
                #expect(!access.contains("la_"))
            }
        }
    }

    @Test("a JWT works on the service's routes only while its session lives: a refresh or a sign-out ends it at once")
    func endsWithItsSession() async throws {
        try await TestPostgres.withDatabase { db in
            let app = try testApplication(db, configure: Self.jwt)
            try await app.test(.router) { client in
                let (access, refresh) = try await client.execute(
                    uri: "/auth/email/signup", method: .post, headers: jsonHeaders,
                    body: jsonBody(["email": "ana@example.com", "password": "violet-harbor-91"])
                ) { response in
                    let body = try json(response)
                    return (body["access_token"] as? String ?? "", body["refresh_token"] as? String ?? "")
                }
                #expect(refresh.hasPrefix("lr_"))
                let renewed = try await client.execute(
                    uri: "/auth/token/refresh", method: .post, headers: jsonHeaders, body: jsonBody(["refresh_token": refresh])
                ) { try json($0)["access_token"] as? String ?? "" }
                #expect(renewed != access)
                #expect(try await Self.status(client, access) == .unauthorized)
                #expect(try await Self.status(client, renewed) == .ok)
                try await client.execute(uri: "/auth/logout", method: .post, headers: bearer(renewed)) { #expect($0.status.code < 300) }
                #expect(try await Self.status(client, renewed) == .unauthorized)
                // And it expires with its `exp`.
                let again = try await logIn(client, email: "ana@example.com")
                db.clock.advance(by: 901)
                #expect(try await Self.status(client, again) == .unauthorized)
            }
        }
    }

    @Test("forged tokens are 401: alg none, HS256 keyed by the public key, tampered claims, an unknown kid, another iss or aud, expired")
    func forgeriesRefused() async throws {
        try await TestPostgres.withDatabase { db in
            let app = try testApplication(db, configure: Self.jwt)
            try await app.test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let (header, claims) = try Self.parts(access)
                let (_, published) = try await Self.keySet(client)
                let publicJWK = try JSONSerialization.data(withJSONObject: published[0], options: [.sortedKeys])
                // The service's own signing key, to sign claims it must still refuse.
                let keys = db.signingKeys()
                let record = try #require(try await keys.schedule().signing(at: db.clock.now()))
                let privateKey = try keys.privateKey(record)
                func signedByService(_ claims: [String: Any]) async throws -> String {
                    let collection = JWTKeyCollection()
                    await collection.add(ecdsa: privateKey, kid: JWKIdentifier(string: record.kid))
                    let data = try JSONSerialization.data(withJSONObject: claims)
                    var jwtHeader = JWTHeader()
                    jwtHeader.typ = "at+jwt"
                    jwtHeader.alg = "ES256"
                    return try await collection.sign(
                        try JSONDecoder().decode(AccessTokenClaims.self, from: data), kid: JWKIdentifier(string: record.kid),
                        header: jwtHeader)
                }
                var forgeries: [String: String] = [:]
                var none = header
                none["alg"] = "none"
                forgeries["alg none"] = try Self.assemble(none, claims) { _ in [] }
                var hmac = header
                hmac["alg"] = "HS256"
                forgeries["HS256 keyed by the public key"] = try Self.assemble(hmac, claims) { input in
                    Array(HMAC<Crypto.SHA256>.authenticationCode(for: input, using: SymmetricKey(data: publicJWK)))
                }
                let pieces = access.split(separator: ".").map(String.init)
                var tampered = claims
                tampered["sub"] = UUID().uuidString.lowercased()
                forgeries["tampered claims"] =
                    pieces[0] + "." + Base64URL.encode(Array(try JSONSerialization.data(withJSONObject: tampered))) + "." + pieces[2]
                let stranger = ES256PrivateKey()
                forgeries["an unknown kid"] = try await {
                    let collection = JWTKeyCollection()
                    await collection.add(ecdsa: stranger, kid: "not-ours")
                    var jwtHeader = JWTHeader()
                    jwtHeader.typ = "at+jwt"
                    return try await collection.sign(
                        try JSONDecoder().decode(AccessTokenClaims.self, from: try JSONSerialization.data(withJSONObject: claims)),
                        kid: "not-ours", header: jwtHeader)
                }()
                var otherIssuer = claims
                otherIssuer["iss"] = "https://evil.example"
                forgeries["another iss"] = try await signedByService(otherIssuer)
                var otherAudience = claims
                otherAudience["aud"] = "payouts"
                forgeries["another aud"] = try await signedByService(otherAudience)
                var expired = claims
                expired["exp"] = Int(db.clock.now().timeIntervalSince1970) - 1
                forgeries["expired"] = try await signedByService(expired)
                // The control: the same claims signed by the same key pass.
                #expect(try await Self.status(client, try await signedByService(claims)) == .ok)
                for (name, forged) in forgeries {
                    #expect(try await Self.status(client, forged) == .unauthorized, "\(name)")
                }
            }
        }
    }

    @Test("switching the format keeps issued tokens: an opaque token after the switch to jwt, a JWT after the switch back")
    func switchingKeepsTokens() async throws {
        try await TestPostgres.withDatabase { db in
            let opaqueApp = try testApplication(db)
            let opaque = try await opaqueApp.test(.router) { client in try await signUp(client, email: "ana@example.com") }
            #expect(opaque.hasPrefix("la_"))
            let jwtApp = try testApplication(db, configure: Self.jwt)
            let jwt = try await jwtApp.test(.router) { client in
                #expect(try await Self.status(client, opaque) == .ok)
                return try await logIn(client, email: "ana@example.com")
            }
            #expect(JWTAccessTokens.looksLikeJWT(jwt))
            let backApp = try testApplication(db) { $0.tokenIssuer = Self.issuer }
            let (jwtStatus, opaqueStatus) = try await backApp.test(.router) { client in
                (try await Self.status(client, jwt), try await Self.status(client, opaque))
            }
            #expect(jwtStatus == .ok && opaqueStatus == .ok)
        }
    }

    @Test("a rotation publishes the new key first, signs with it after the delay, and keeps the old one until its tokens expired")
    func rotation() async throws {
        try await TestPostgres.withDatabase { db in
            let app = try testApplication(db, configure: Self.jwt)
            try await app.test(.router) { client in
                let before = try await signUp(client, email: "ana@example.com")
                let oldKid = try Self.parts(before).header["kid"] as? String
                let new = try await db.signingKeys().rotate()
                // Another instance's rotation is seen within the reload interval.
                db.clock.advance(by: JWTAccessTokens.reloadInterval)
                #expect(try await Self.keySet(client).1.compactMap { $0["kid"] as? String } == [oldKid, new.kid])
                #expect(try Self.parts(try await logIn(client, email: "ana@example.com")).header["kid"] as? String == oldKid)

                db.clock.advance(by: 600)
                let after = try await logIn(client, email: "ana@example.com")
                #expect(try Self.parts(after).header["kid"] as? String == new.kid)
                #expect(try await Self.status(client, after) == .ok)
                // The old key's last token lives until its exp (and a minute); then the key leaves the set.
                db.clock.advance(by: 960)
                #expect(try await Self.keySet(client).1.compactMap { $0["kid"] as? String } == [new.kid])
            }
        }
    }

    @Test("a key written into the table by hand is neither published nor trusted; the service signs on with its own")
    func handWrittenKeyIgnored() async throws {
        try await TestPostgres.withDatabase { db in
            let app = try testApplication(db, configure: Self.jwt)
            try await app.test(.router) { client in
                let first = try await signUp(client, email: "ana@example.com")
                let ownKid = try Self.parts(first).header["kid"] as? String
                // Someone who can write to the database adds a key of theirs, active now.
                let intruder = ES256PrivateKey()
                let point = try #require(intruder.publicKey.parameters)
                try await PostgresSigningKeys(client: db.client).insert(
                    SigningKeyRecord(
                        kid: "intruder", sealedKey: Array(repeating: 1, count: 80), masterKeyID: db.masterKey.keyID, x: point.x,
                        y: point.y, createdAt: db.clock.now(), activatesAt: db.clock.now()))
                db.clock.advance(by: JWTAccessTokens.reloadInterval)
                #expect(try await Self.keySet(client).1.compactMap { $0["kid"] as? String } == [ownKid])
                let next = try await logIn(client, email: "ana@example.com")
                #expect(try Self.parts(next).header["kid"] as? String == ownKid)
                #expect(try await Self.status(client, next) == .ok)
                // A token the intruder signs, naming a live session's hash, is refused.
                var header = JWTHeader()
                header.typ = "at+jwt"
                let collection = JWTKeyCollection()
                await collection.add(ecdsa: intruder, kid: "intruder")
                let claims = try JSONDecoder().decode(
                    AccessTokenClaims.self, from: try JSONSerialization.data(withJSONObject: try Self.parts(next).claims))
                let forged = try await collection.sign(claims, kid: "intruder", header: header)
                #expect(try await Self.status(client, forged) == .unauthorized)
            }
        }
    }
}

extension TestDatabase {
    /// The signing keys as `serve` and `ledger signing-keys` hold them on this database.
    func signingKeys() -> SigningKeys {
        var configuration = LedgerConfiguration()
        JWTAccessTokenTests.jwt(&configuration)
        return configuration.signingKeys(client: client, masterKey: masterKey, clock: clock)
    }
}
