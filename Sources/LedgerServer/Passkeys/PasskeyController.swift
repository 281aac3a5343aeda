import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerCore
import LedgerIdentity

/// Passkeys (docs/passkeys.md): registration, the list, renaming and removal for a signed-in
/// session; discoverable sign-in; and re-auth. Options and responses are WebAuthn Level 3's
/// JSON forms, so a page passes them to `PublicKeyCredential.parseCreationOptionsFromJSON` and
/// back from `toJSON()` unchanged.
public struct PasskeyController: Sendable {
    let passkeys: PasskeyService
    let accounts: AccountService

    public init(passkeys: PasskeyService, accounts: AccountService) {
        self.passkeys = passkeys
        self.accounts = accounts
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        let signedIn = routes.group().add(middleware: SessionMiddleware(accounts: accounts))
        signedIn.post("/me/passkeys/options") { request, context in
            let options = try await passkeys.registrationOptions(try context.requireSession(), reauthToken: request.headers[.xReauthToken])
            return JSONResponse(
                .ok,
                PasskeyCreationOptionsBody(
                    options: options, relyingPartyID: passkeys.relyingParty.id, relyingPartyName: passkeys.relyingPartyName))
        }
        signedIn.post("/me/passkeys") { request, context in
            let body = try await request.decodeJSON(PasskeyRegistrationRequest.self, context: context)
            do {
                let passkey = try await passkeys.register(
                    try context.requireSession(), reauthToken: request.headers[.xReauthToken], credential: body.credential,
                    name: body.name)
                return JSONResponse(.created, PasskeyBody(passkey: passkey, listed: false))
            } catch let error as IdentityError where error.code == .invalidCredential {
                // A registration is the signed-in person's own request: a bad one is a bad request.
                throw APIError(.badRequest, .init("invalid_credential"), error.message)
            }
        }
        signedIn.get("/me/passkeys") { _, context in
            let list = try await passkeys.list(try context.requireSession())
            return JSONResponse(.ok, ["passkeys": .array(list.map { .object(PasskeyBody(passkey: $0, listed: true).fields) })])
        }
        signedIn.patch("/me/passkeys/{id}") { request, context in
            let id = try Self.passkeyID(context)
            let body = try await request.decodeJSON(PasskeyRenameRequest.self, context: context)
            let passkey = try await passkeys.rename(try context.requireSession(), passkeyID: id, name: body.name)
            return JSONResponse(.ok, PasskeyBody(passkey: passkey, listed: true))
        }
        signedIn.delete("/me/passkeys/{id}") { request, context in
            let id = try Self.passkeyID(context)
            let state = try await passkeys.remove(try context.requireSession(), passkeyID: id, reauthToken: request.headers[.xReauthToken])
            return JSONResponse(.ok, AuthMethodsBody(AccountSummary(state)))
        }
        routes.post("/auth/passkey/options") { _, _ in
            JSONResponse(.ok, PasskeyRequestOptionsBody(options: try passkeys.signInOptions(), relyingPartyID: passkeys.relyingParty.id))
        }
        routes.post("/auth/passkey/login") { request, context in
            let body = try await request.decodeJSON(PasskeyAssertionRequest.self, context: context)
            let session = try await passkeys.signIn(
                credential: body.credential, device: request.deviceLabel, client: context.client, deviceToken: request.deviceToken,
                locale: request.locale)
            return JSONResponse(.ok, SessionBody(session))
        }
        signedIn.post("/auth/reauth/passkey/options") { _, context in
            let options = try await passkeys.reauthOptions(try context.requireSession())
            return JSONResponse(.ok, PasskeyRequestOptionsBody(options: options, relyingPartyID: passkeys.relyingParty.id))
        }
        signedIn.post("/auth/reauth/passkey") { request, context in
            let body = try await request.decodeJSON(PasskeyAssertionRequest.self, context: context)
            let grant = try await passkeys.reauth(try context.requireSession(), credential: body.credential, client: context.client)
            return JSONResponse(.ok, ReauthController.grantBody(grant))
        }
        return routes
    }

    /// The `{id}` of the path; an id that is not a UUID names no passkey (`404`).
    static func passkeyID(_ context: LedgerRequestContext) throws -> UUID {
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else { throw IdentityError.passkeyNotFound }
        return id
    }
}
