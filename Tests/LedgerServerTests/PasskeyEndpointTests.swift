import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerCore
import LedgerIdentity
import LedgerServer
import LedgerTestSupport
import LedgerWebAuthn
import LedgerWebAuthnTesting
import Testing

@Suite("HTTP: passkeys", .timeLimit(.minutes(10)))
struct PasskeyEndpointTests {
    static let rpID = "localhost"
    static let origin = "http://localhost:8080"

    func withApp(
        live: Bool = false, configure: @escaping @Sendable (inout LedgerConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (any TestClientProtocol, MemoryBackend) async throws -> Void
    ) async throws {
        try await MemoryBackend.with { db in
            let services = try db.dependencies {
                Self.relyingParty(&$0)
                configure(&$0)
            }
            // Live (a real socket) where the client's address matters: the router test has none.
            try await Application(router: buildRouter(services)).test(live ? .live : .router) { client in
                try await body(client, db)
            }
        }
    }

    /// The relying party the soft authenticator signs for, and sign-in failures that never lock.
    static let relyingParty: @Sendable (inout LedgerConfiguration) -> Void = {
        $0.webAuthnRPID = rpID
        $0.webAuthnOrigins = [origin]
        $0.policies.loginMaxFailures = 50
    }

    static func object(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    static func challenge(_ options: Answer) throws -> [UInt8] {
        let text = try #require(options.string("challenge"))
        return try #require(Base64URL.decode(text))
    }

    static func userHandle(_ options: Answer) throws -> [UInt8] {
        let user = try #require(options.body["user"] as? [String: Any])
        let text = try #require(user["id"] as? String)
        return try #require(Base64URL.decode(text))
    }

    /// A passkey registered for `access` with `grant` on `authenticator`: the soft credential and the passkey's id.
    func register(
        _ client: some TestClientProtocol, _ authenticator: SoftAuthenticator, token access: String, grant: String,
        algorithm: COSEAlgorithm = .es256, signCount: UInt32 = 0, name: String? = nil
    ) async throws -> (credential: SoftCredential, id: String) {
        let options = try await call(client, .post, "/me/passkeys/options", token: access, reauth: grant)
        #expect(options.status == .ok)
        let handle = try Self.userHandle(options)
        let made = authenticator.makeCredential(
            rpID: Self.rpID, origin: Self.origin, challenge: try Self.challenge(options), userHandle: handle, algorithm: algorithm,
            signCount: signCount)
        var body: [String: Any] = ["credential": try Self.object(made.response.jsonBytes())]
        if let name { body["name"] = name }
        let registered = try await call(client, .post, "/me/passkeys", body, token: access, reauth: grant)
        #expect(registered.status == .created)
        return (made.credential, try #require(registered.string("id")))
    }

    /// Signs in with `credential`: the answer.
    func signIn(
        _ client: some TestClientProtocol, _ authenticator: SoftAuthenticator, _ credential: SoftCredential,
        signCount: UInt32? = nil, origin: String? = nil, flags: SoftFlags? = nil
    ) async throws -> Answer {
        let options = try await call(client, .post, "/auth/passkey/options")
        #expect(options.status == .ok && (options.body["allowCredentials"] as? [Any])?.isEmpty == true)
        let assertion = authenticator.getAssertion(
            credential: credential, challenge: try Self.challenge(options), origin: origin, flags: flags, signCount: signCount)
        return try await call(client, .post, "/auth/passkey/login", ["credential": try Self.object(assertion.jsonBytes())])
    }

    /// An email account whose address is verified by a re-auth link: its access token and that grant.
    func account(_ client: some TestClientProtocol, _ db: some TestBackend, email: String = "ana@example.com") async throws
        -> (access: String, grant: String)
    {
        let access = try await signUp(client, email: email)
        return (access, try await emailLinkGrant(client, db, token: access))
    }

    /// A phone-only account (+995 511 200 300) signed in by its code: its access token and a grant by the phone.
    func phoneAccount(_ client: some TestClientProtocol, _ db: some TestBackend) async throws -> (access: String, grant: String) {
        let access = try await phoneSignIn(client, db, "+995511200300")
        return (access, try await phoneGrant(client, db, token: access, phone: "+995511200300"))
    }

    @Test("register with re-auth, listed and counted in the hub, method_added sent, then a sign-in with it")
    func registerAndSignIn() async throws {
        try await withApp { client, db in
            let (access, grant) = try await account(client, db)
            #expect(try await call(client, .post, "/me/passkeys/options", token: access).status == .forbidden)
            let options = try await call(client, .post, "/me/passkeys/options", token: access, reauth: grant)
            let rp = options.body["rp"] as? [String: Any]
            #expect(rp?["id"] as? String == Self.rpID)
            let selection = options.body["authenticatorSelection"] as? [String: Any]
            #expect(selection?["residentKey"] as? String == "required" && selection?["userVerification"] as? String == "required")
            #expect((options.body["pubKeyCredParams"] as? [[String: Any]])?.compactMap { $0["alg"] as? Int } == [-7, -8, -257])
            #expect(options.string("attestation") == "none")
            // The handle is opaque: not the account id, not the address.
            let handle = try Self.userHandle(options)
            #expect(handle.count == 32 && !String(decoding: handle, as: UTF8.self).contains("ana@"))

            let authenticator = SoftAuthenticator()
            let (credential, id) = try await register(client, authenticator, token: access, grant: grant, name: "My iPhone")
            let listed = try await call(client, .get, "/me/passkeys", token: access)
            let passkeys = listed.body["passkeys"] as? [[String: Any]]
            #expect(passkeys?.count == 1 && passkeys?.first?["name"] as? String == "My iPhone" && passkeys?.first?["id"] as? String == id)
            #expect(passkeys?.first?["last_used_at"] is NSNull)
            #expect(try await call(client, .get, "/me/auth-methods", token: access).body["passkeys"] as? Int == 1)
            let notice = try await db.queuedMessages(template: "method_added").last
            #expect(notice != nil && notice?.details?["method"] == "passkey")
            // Once a passkey is registered, every registration's options name its handle, and exclude it.
            let again = try await call(client, .post, "/me/passkeys/options", token: access, reauth: grant)
            #expect((try? Self.userHandle(again)) == credential.userHandle)
            #expect((again.body["excludeCredentials"] as? [[String: Any]])?.first?["id"] as? String == Base64URL.encode(credential.id))

            let session = try await signIn(client, authenticator, credential)
            #expect(session.status == .ok && session.string("access_token") != nil && session.string("device_token") != nil)
            let signedIn: String = try #require(session.string("access_token"))
            let me = try await call(client, .get, "/me/passkeys", token: signedIn)
            #expect((me.body["passkeys"] as? [[String: Any]])?.first?["last_used_at"] is String)
        }
    }

    @Test("each relying-party check refuses a sign-in: origin, RP id, user verification, another key, a replayed challenge")
    func assertionChecks() async throws {
        try await withApp { client, db in
            let (access, grant) = try await account(client, db)
            let authenticator = SoftAuthenticator()
            let (credential, _) = try await register(client, authenticator, token: access, grant: grant)
            func refused(_ answer: Answer) {
                #expect(answer.status == .unauthorized && answer.string("error") == "invalid_credential")
                #expect(answer.string("message") == "This passkey could not be verified. Try again.")
            }
            refused(try await signIn(client, authenticator, credential, origin: "https://evil.example"))
            refused(try await signIn(client, authenticator, credential, flags: SoftFlags(userVerified: false)))
            refused(try await signIn(client, authenticator, credential, flags: SoftFlags(userPresent: false)))
            // Another RP id: a credential made for another site.
            let options = try await call(client, .post, "/auth/passkey/options")
            let foreign = authenticator.getAssertion(credential: credential, challenge: try Self.challenge(options), rpID: "evil.example")
            refused(try await call(client, .post, "/auth/passkey/login", ["credential": try Self.object(foreign.jsonBytes())]))
            // Signed by another key under this credential's id.
            let other = authenticator.makeCredential(
                rpID: Self.rpID, origin: Self.origin, challenge: [1], userHandle: credential.userHandle)
            let fresh = try await call(client, .post, "/auth/passkey/options")
            var forged = authenticator.getAssertion(credential: other.credential, challenge: try Self.challenge(fresh))
            forged.id = Base64URL.encode(credential.id)
            forged.rawId = Base64URL.encode(credential.id)
            refused(try await call(client, .post, "/auth/passkey/login", ["credential": try Self.object(forged.jsonBytes())]))
            // A challenge the service never issued, and one answered twice.
            let made = authenticator.getAssertion(credential: credential, challenge: Array(repeating: 7, count: 100))
            refused(try await call(client, .post, "/auth/passkey/login", ["credential": try Self.object(made.jsonBytes())]))
            let good = try await call(client, .post, "/auth/passkey/options")
            let answer = authenticator.getAssertion(credential: credential, challenge: try Self.challenge(good))
            let body: [String: Any] = ["credential": try Self.object(answer.jsonBytes())]
            #expect(try await call(client, .post, "/auth/passkey/login", body).status == .ok)
            refused(try await call(client, .post, "/auth/passkey/login", body))
            // A refused answer spends its challenge too.
            let once = try await call(client, .post, "/auth/passkey/options")
            let wrongOrigin = authenticator.getAssertion(
                credential: credential, challenge: try Self.challenge(once), origin: "https://x.example")
            refused(try await call(client, .post, "/auth/passkey/login", ["credential": try Self.object(wrongOrigin.jsonBytes())]))
            let retried = authenticator.getAssertion(credential: credential, challenge: try Self.challenge(once))
            refused(try await call(client, .post, "/auth/passkey/login", ["credential": try Self.object(retried.jsonBytes())]))
            // A challenge past its 5 minutes.
            let stale = try await call(client, .post, "/auth/passkey/options")
            db.clock.advance(by: 301)
            let late = authenticator.getAssertion(credential: credential, challenge: try Self.challenge(stale))
            refused(try await call(client, .post, "/auth/passkey/login", ["credential": try Self.object(late.jsonBytes())]))
        }
    }

    @Test(
        "a registration answering another session's options, with a bad origin or a key named twice in its client data, is 400 invalid_credential; the same passkey twice is 409"
    )
    func registrationChecks() async throws {
        try await withApp { client, db in
            let (access, grant) = try await account(client, db)
            let second = try await logIn(client, email: "ana@example.com")
            let authenticator = SoftAuthenticator()
            let options = try await call(client, .post, "/me/passkeys/options", token: access, reauth: grant)
            let handle = try Self.userHandle(options)
            let made = authenticator.makeCredential(
                rpID: Self.rpID, origin: Self.origin, challenge: try Self.challenge(options), userHandle: handle)
            let secondGrant = try await passwordGrant(client, token: second)
            // The other session (with a grant of its own) cannot use this session's challenge.
            let stolen = try await call(
                client, .post, "/me/passkeys", ["credential": try Self.object(made.response.jsonBytes())], token: second,
                reauth: secondGrant)
            #expect(stolen.status == .badRequest && stolen.string("error") == "invalid_credential")

            let fresh = try await call(client, .post, "/me/passkeys/options", token: access, reauth: grant)
            let badOrigin = authenticator.makeCredential(
                rpID: Self.rpID, origin: "https://evil.example", challenge: try Self.challenge(fresh), userHandle: handle)
            let refused = try await call(
                client, .post, "/me/passkeys", ["credential": try Self.object(badOrigin.response.jsonBytes())], token: access, reauth: grant
            )
            #expect(refused.status == .badRequest && refused.string("error") == "invalid_credential")

            // Client data naming a key twice: refused whichever copy would have been read.
            let repeated = try await call(client, .post, "/me/passkeys/options", token: access, reauth: grant)
            let duplicate = authenticator.makeCredential(
                rpID: Self.rpID, origin: Self.origin, challenge: try Self.challenge(repeated), userHandle: handle,
                clientDataTail: #","origin":"https://evil.example""#)
            let twiceNamed = try await call(
                client, .post, "/me/passkeys", ["credential": try Self.object(duplicate.response.jsonBytes())], token: access, reauth: grant
            )
            #expect(twiceNamed.status == .badRequest && twiceNamed.string("error") == "invalid_credential")

            let (credential, _) = try await register(client, authenticator, token: access, grant: grant)
            let signInOptions = try await call(client, .post, "/auth/passkey/options")
            let duplicateAssertion = authenticator.getAssertion(
                credential: credential, challenge: try Self.challenge(signInOptions), clientDataTail: #","type":"webauthn.get""#)
            let duplicateSignIn = try await call(
                client, .post, "/auth/passkey/login", ["credential": try Self.object(duplicateAssertion.jsonBytes())])
            #expect(duplicateSignIn.status == .unauthorized && duplicateSignIn.string("error") == "invalid_credential")
            let twice = try await call(client, .post, "/me/passkeys/options", token: access, reauth: grant)
            let same = authenticator.makeCredential(
                rpID: Self.rpID, origin: Self.origin, challenge: try Self.challenge(twice), userHandle: handle, credentialID: credential.id)
            let exists = try await call(
                client, .post, "/me/passkeys", ["credential": try Self.object(same.response.jsonBytes())], token: access, reauth: grant)
            #expect(exists.status == .conflict && exists.string("error") == "passkey_exists")
            #expect(try await call(client, .get, "/me/auth-methods", token: access).body["passkeys"] as? Int == 1)
        }
    }

    @Test("a counter that does not grow is refused, recorded as passkey.suspect, and the owner is told")
    func counter() async throws {
        try await withApp { client, db in
            let (access, grant) = try await account(client, db)
            let authenticator = SoftAuthenticator()
            let (credential, _) = try await register(client, authenticator, token: access, grant: grant, signCount: 5)
            #expect(try await signIn(client, authenticator, credential, signCount: 6).status == .ok)
            let clone = try await signIn(client, authenticator, credential, signCount: 6)
            #expect(clone.status == .unauthorized && clone.string("error") == "invalid_credential")
            #expect(try await db.storedEventCount(type: "passkey.suspect") == 1)
            #expect(try await outboxMessage(db, template: "passkey_suspect").to == "ana@example.com")
            #expect(try await signIn(client, authenticator, credential, signCount: 7).status == .ok)
        }
    }

    @Test("a synced passkey that always says 0 signs in again and again")
    func syncedCounter() async throws {
        try await withApp { client, db in
            let (access, grant) = try await account(client, db)
            let authenticator = SoftAuthenticator()
            let (credential, _) = try await register(client, authenticator, token: access, grant: grant)
            for _ in 0..<3 { #expect(try await signIn(client, authenticator, credential, signCount: 0).status == .ok) }
        }
    }

    @Test("with TOTP on, a passkey sign-in is a session at once; a disabled account's is 403, a deleted one's 401")
    func secondFactorDisabledDeleted() async throws {
        try await withApp { client, db in
            let (access, grant) = try await account(client, db)
            let authenticator = SoftAuthenticator()
            let (credential, _) = try await register(client, authenticator, token: access, grant: grant)
            let begun = try await call(client, .post, "/me/mfa/totp", token: access, reauth: grant)
            let secret = try #require(begun.string("secret").flatMap(TOTPCodes.secret(fromBase32:)))
            let code = TOTPCodes.code(secret, step: TOTPCodes.step(at: db.clock.now()))
            #expect(try await call(client, .post, "/me/mfa/totp/confirm", ["code": code], token: access).status == .ok)
            let session = try await signIn(client, authenticator, credential)
            #expect(session.status == .ok && session.body["mfa_required"] == nil && session.string("access_token") != nil)

            let deleted = try await call(client, .delete, "/me", token: access, reauth: grant)
            #expect(deleted.status == .accepted)
            // That the lookup row goes with the deletion: AtRestTests.passkeyRowDeleted.
            let after = try await signIn(client, authenticator, credential)
            #expect(after.status == .unauthorized && after.string("error") == "invalid_credential")
        }
    }

    @Test("rename (no re-auth; 404, 422), remove with re-auth (manage_passkeys), and the last-method guard of a passkey-only account")
    func renameRemoveLastMethod() async throws {
        try await withApp { client, db in
            // A phone account: the phone is removed once a passkey is there, leaving the passkey alone.
            let (access, grant) = try await phoneAccount(client, db)
            let authenticator = SoftAuthenticator()
            let (_, id) = try await register(client, authenticator, token: access, grant: grant)
            let renamed = try await call(
                client, .patch, "/me/passkeys/\(id)", ["name": "YubiKey 5C"], token: access, path: "/me/passkeys/{id}")
            #expect(renamed.status == .ok && renamed.string("name") == "YubiKey 5C")
            let blank = try await call(client, .patch, "/me/passkeys/\(id)", ["name": "  "], token: access, path: "/me/passkeys/{id}")
            #expect(blank.status == .unprocessableContent)
            let unknown = try await call(
                client, .patch, "/me/passkeys/\(UUID().uuidString)", ["name": "x"], token: access, path: "/me/passkeys/{id}")
            #expect(unknown.status == .notFound)
            #expect(try await call(client, .delete, "/me/auth-methods/phone", token: access, reauth: grant).status == .ok)
            // The passkey is the only way in now: refused before re-auth, with or without a grant.
            for reauth in [nil, grant] {
                let last = try await call(client, .delete, "/me/passkeys/\(id)", token: access, reauth: reauth, path: "/me/passkeys/{id}")
                #expect(last.status == .conflict && last.string("error") == "last_method")
            }
            // With a second passkey either may go, with a grant of manage_passkeys (a week after
            // passkeys became all the account has, one of them may vouch: `passkeyOnlyAccount`).
            let (_, second) = try await register(client, authenticator, token: access, grant: grant)
            let picker = try await call(client, .get, "/me/reauth-options?action=manage_passkeys", token: access)
            #expect(picker.body["methods"] as? [String] == [])
            #expect(
                try await call(client, .delete, "/me/passkeys/\(second)", token: access, path: "/me/passkeys/{id}").status == .forbidden)
            let removed = try await call(client, .delete, "/me/passkeys/\(second)", token: access, reauth: grant, path: "/me/passkeys/{id}")
            #expect(removed.status == .ok && removed.body["passkeys"] as? Int == 1)
            // The hub's count is the projection's, kept with the account's row.
            #expect(try await call(client, .get, "/me/auth-methods", token: access).body["passkeys"] as? Int == 1)
        }
    }

    /// A re-auth grant for `access` by `credential`'s assertion.
    func passkeyGrant(
        _ client: some TestClientProtocol, _ authenticator: SoftAuthenticator, _ credential: SoftCredential, token access: String
    )
        async throws -> String
    {
        let options = try await call(client, .post, "/auth/reauth/passkey/options", token: access)
        let answer = authenticator.getAssertion(credential: credential, challenge: try Self.challenge(options))
        let granted = try await call(
            client, .post, "/auth/reauth/passkey", ["credential": try Self.object(answer.jsonBytes())], token: access)
        #expect(granted.status == .ok)
        return try #require(granted.string("reauth_token"))
    }

    @Test("a passkey grant removes the phone; a week after passkeys became all, one passkey's grant removes another, never itself")
    func passkeyOnlyAccount() async throws {
        try await withApp { client, db in
            let (access, grant) = try await phoneAccount(client, db)
            let authenticator = SoftAuthenticator()
            let (phoneCredential, first) = try await register(client, authenticator, token: access, grant: grant)
            let (_, second) = try await register(client, authenticator, token: access, grant: grant)
            // Beside the phone, a passkey is no option for removing passkeys.
            let beside = try await call(client, .get, "/me/reauth-options?action=manage_passkeys", token: access)
            #expect(beside.body["methods"] as? [String] == ["phone"])
            // A passkey's grant removes the phone: passkeys are all the account has now.
            let byPhoneRemover = try await passkeyGrant(client, authenticator, phoneCredential, token: access)
            #expect(try await call(client, .delete, "/me/auth-methods/phone", token: access, reauth: byPhoneRemover).status == .ok)
            // Not that grant, nor any other this week, removes a passkey (a thief's removal of the
            // phone must not go on to the owner's passkeys, with nobody left to tell).
            let soon = try await call(client, .get, "/me/reauth-options?action=manage_passkeys", token: access)
            #expect(soon.body["methods"] as? [String] == [] && soon.body["last_method"] as? Bool == false)
            let early = try await call(
                client, .delete, "/me/passkeys/\(second)", token: access, reauth: byPhoneRemover, path: "/me/passkeys/{id}")
            #expect(early.status == .forbidden && early.string("error") == "reauth_required")
            // A week on, signed in again by a passkey.
            db.clock.advance(by: AccountState.passkeyVouchingDelay)
            let signedIn = try await signIn(client, authenticator, phoneCredential)
            let fresh = try #require(signedIn.string("access_token"))
            let picker = try await call(client, .get, "/me/reauth-options?action=manage_passkeys", token: fresh)
            #expect(picker.body["methods"] as? [String] == ["passkey"] && picker.body["last_method"] as? Bool == false)
            let byFirst = try await passkeyGrant(client, authenticator, phoneCredential, token: fresh)
            // The first passkey's grant does not remove the first passkey; it removes the second.
            let itself = try await call(client, .delete, "/me/passkeys/\(first)", token: fresh, reauth: byFirst, path: "/me/passkeys/{id}")
            #expect(itself.status == .forbidden && itself.string("error") == "reauth_required")
            let other = try await call(client, .delete, "/me/passkeys/\(second)", token: fresh, reauth: byFirst, path: "/me/passkeys/{id}")
            #expect(other.status == .ok && other.body["passkeys"] as? Int == 1)
            // The last one stays, whatever the grant.
            let last = try await call(client, .delete, "/me/passkeys/\(first)", token: fresh, reauth: byFirst, path: "/me/passkeys/{id}")
            #expect(last.status == .conflict && last.string("error") == "last_method")
        }
    }

    @Test("an account with no verified email hears of a cloned passkey by SMS")
    func suspectBySMS() async throws {
        try await withApp { client, db in
            let (access, grant) = try await phoneAccount(client, db)
            let authenticator = SoftAuthenticator()
            let (credential, _) = try await register(client, authenticator, token: access, grant: grant, signCount: 5)
            #expect(try await signIn(client, authenticator, credential, signCount: 6).status == .ok)
            #expect(try await signIn(client, authenticator, credential, signCount: 6).status == .unauthorized)
            let alert = try await outboxMessage(db, template: "passkey_suspect")
            #expect(alert.to == "+995511200300")
            let channel = try await db.queuedMessages(template: "passkey_suspect").map(\.channel)
            #expect(channel.count == 1 && channel[0] == "sms")
        }
    }

    @Test("re-auth by passkey: options list the account's passkeys (404 without one), and the grant changes the password")
    func reauthChangesPassword() async throws {
        try await withApp { client, db in
            let (access, grant) = try await account(client, db)
            #expect(try await call(client, .post, "/auth/reauth/passkey/options", token: access).status == .notFound)
            let authenticator = SoftAuthenticator()
            let (credential, id) = try await register(client, authenticator, token: access, grant: grant)
            let picker = try await call(client, .get, "/me/reauth-options?action=change_password", token: access)
            #expect((picker.body["methods"] as? [String])?.contains("passkey") == true)
            let options = try await call(client, .post, "/auth/reauth/passkey/options", token: access)
            #expect((options.body["allowCredentials"] as? [[String: Any]])?.first?["id"] as? String == Base64URL.encode(credential.id))
            let assertion = authenticator.getAssertion(credential: credential, challenge: try Self.challenge(options))
            let body: [String: Any] = ["credential": try Self.object(assertion.jsonBytes())]
            // Another session cannot use this session's re-auth challenge.
            let other = try await logIn(client, email: "ana@example.com")
            let stolen = try await call(client, .post, "/auth/reauth/passkey", body, token: other)
            #expect(stolen.status == .unauthorized && stolen.string("error") == "invalid_credential")
            let fresh = try await call(client, .post, "/auth/reauth/passkey/options", token: access)
            let answer = authenticator.getAssertion(credential: credential, challenge: try Self.challenge(fresh))
            let granted = try await call(
                client, .post, "/auth/reauth/passkey", ["credential": try Self.object(answer.jsonBytes())], token: access)
            #expect(granted.status == .ok)
            let passkeyGrant: String = try #require(granted.string("reauth_token"))
            // That grant does not remove a passkey (manage_passkeys: its target cannot vouch for it).
            let removal = try await call(
                client, .delete, "/me/passkeys/\(id)", token: access, reauth: passkeyGrant, path: "/me/passkeys/{id}")
            #expect(removal.status == .forbidden && removal.string("error") == "reauth_required")
            let changed = try await call(
                client, .post, "/auth/password/change", ["new_password": "copper-lantern-77"], token: access, reauth: passkeyGrant)
            #expect(changed.status == .ok)
            #expect(try await logIn(client, email: "ana@example.com", password: "copper-lantern-77").isEmpty == false)
        }
    }

    @Test("bad input: malformed JSON, wrong types, garbage base64 are 4xx and change nothing")
    func badInput() async throws {
        try await withApp { client, db in
            let (access, grant) = try await account(client, db)
            for body: [String: Any] in [
                [:], ["credential": "x"], ["credential": ["id": 1]],
            ] {
                #expect(try await call(client, .post, "/auth/passkey/login", body).status == .badRequest)
                #expect(try await call(client, .post, "/me/passkeys", body, token: access, reauth: grant).status == .badRequest)
            }
            let garbage: [String: Any] = [
                "credential": [
                    "id": "!!", "rawId": "!!", "type": "public-key",
                    "response": ["clientDataJSON": "e30", "authenticatorData": "AAAA", "signature": "AA", "attestationObject": "oA"],
                ]
            ]
            #expect(try await call(client, .post, "/auth/passkey/login", garbage).status == .unauthorized)
            let registration = try await call(client, .post, "/me/passkeys", garbage, token: access, reauth: grant)
            #expect(registration.status == .badRequest && registration.string("error") == "invalid_credential")
            #expect(try await call(client, .get, "/me/auth-methods", token: access).body["passkeys"] as? Int == 0)
        }
    }

    @Test("a forged challenge writes nothing; a discoverable sign-in without a user handle, or another account's handle, is refused")
    func forgedChallengeAndUserHandle() async throws {
        try await withApp { client, db in
            let (access, grant) = try await account(client, db)
            let authenticator = SoftAuthenticator()
            let (credential, _) = try await register(client, authenticator, token: access, grant: grant)
            for _ in 0..<5 {
                let forged = authenticator.getAssertion(credential: credential, challenge: Array(repeating: 9, count: 90))
                #expect(
                    try await call(client, .post, "/auth/passkey/login", ["credential": try Self.object(forged.jsonBytes())]).status
                        == .unauthorized)
            }
            // That they leave no spent challenge behind: AtRestTests.forgedChallengeWritesNothing.
            let options = try await call(client, .post, "/auth/passkey/options")
            let anonymous = authenticator.getAssertion(
                credential: credential, challenge: try Self.challenge(options), includeUserHandle: false)
            #expect(
                try await call(client, .post, "/auth/passkey/login", ["credential": try Self.object(anonymous.jsonBytes())]).status
                    == .unauthorized)
            let fresh = try await call(client, .post, "/auth/passkey/options")
            let foreign = authenticator.getAssertion(
                credential: credential, challenge: try Self.challenge(fresh), userHandle: Array(repeating: 1, count: 32))
            #expect(
                try await call(client, .post, "/auth/passkey/login", ["credential": try Self.object(foreign.jsonBytes())]).status
                    == .unauthorized)
        }
    }

    @Test("sign-ins are counted against the client (an IPv6 /64) before the lookup: past the limit, 429")
    func signInLimitPerClient() async throws {
        let tightLimit: @Sendable (inout LedgerConfiguration) -> Void = {
            $0.policies.ipLoginFailureLimit = 3
            $0.trustedProxies = ["127.0.0.1/32", "::1/128"]
        }
        try await withApp(live: true, configure: tightLimit) { client, _ in
            for index in 0..<3 {
                let made = SoftAuthenticator().getAssertion(
                    credential: SoftAuthenticator().makeCredential(rpID: Self.rpID, origin: Self.origin, challenge: [1], userHandle: [1])
                        .credential,
                    challenge: [UInt8](repeating: UInt8(index), count: 90))
                let answer = try await call(
                    client, .post, "/auth/passkey/login", ["credential": try Self.object(made.jsonBytes())],
                    from: "2001:db8:1:2::\(index + 1)")
                #expect(answer.status == .unauthorized)
            }
            // Another address of the same /64: refused before anything is looked at.
            let options = try await call(client, .post, "/auth/passkey/options")
            let made = SoftAuthenticator().getAssertion(
                credential: SoftAuthenticator().makeCredential(rpID: Self.rpID, origin: Self.origin, challenge: [1], userHandle: [1])
                    .credential,
                challenge: try Self.challenge(options))
            let limited = try await call(
                client, .post, "/auth/passkey/login", ["credential": try Self.object(made.jsonBytes())], from: "2001:db8:1:2::ff")
            #expect(limited.status == .tooManyRequests)
        }
    }

    @Test("a disabled account's passkey, right in every way, is 403 account_disabled and starts no session")
    func disabledAccount() async throws {
        try await withApp { client, db in
            let (access, grant) = try await account(client, db)
            let authenticator = SoftAuthenticator()
            let (credential, _) = try await register(client, authenticator, token: access, grant: grant)
            let admin = try await db.apiKeys.create(name: "support", scopes: [.accountsAdmin]).key
            let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
            let disabled = try await call(
                client, .post, "/accounts/\(accountID)/disable", ["reason": "review"], token: admin, path: "/accounts/{id}/disable")
            #expect(disabled.status == .ok)
            let answer = try await signIn(client, authenticator, credential)
            #expect(answer.status == .forbidden && answer.string("error") == "account_disabled")
            let sessions = try await db.state(of: try #require(UUID(uuidString: accountID))).sessions.values
            #expect(sessions.count { $0.method == "passkey" && $0.isActive } == 0)
        }
    }
}
