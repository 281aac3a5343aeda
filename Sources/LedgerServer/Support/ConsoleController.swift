import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerCore
import LedgerEvents
import LedgerIdentity
import LedgerWebAuthn
import NIOCore

/// The support console at `/console` (docs/support.md "The console"): server-rendered pages for
/// the admin API's work, for staff signed in with their passkey. The session is a `__Host-`
/// cookie (`HttpOnly`, `Secure`, `SameSite=Strict`, 8 hours); every change carries the
/// session's form token and is refused when its `Origin` is not the console's; a heavy change
/// asks for the passkey again. Pages work without JavaScript but for the passkey ceremonies.
public struct ConsoleController: Sendable {
    let console: StaffConsole
    let desk: SupportDesk
    let audit: (any AccountAuditing)?
    let pages: ConsolePages

    /// The session cookie's name: `__Host-` keeps it to this host, over HTTPS, on `/`.
    public static let cookieName = "__Host-ledger_console"

    public init(console: StaffConsole, desk: SupportDesk, audit: (any AccountAuditing)?, pages: ConsolePages) {
        self.console = console
        self.desk = desk
        self.audit = audit
        self.pages = pages
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.get("/console/assets/console.css") { _, _ in Self.asset(pages.stylesheet, type: "text/css; charset=utf-8") }
        routes.get("/console/assets/console.js") { _, _ in Self.asset(pages.script, type: "text/javascript; charset=utf-8") }
        routes.get("/console") { request, _ in
            guard let staff = try await staff(request) else { return Self.redirect("/console/sign-in") }
            return pages.render("Find an account", ["home": true], staff: staff)
        }
        routes.get("/console/sign-in") { request, _ in
            if try await staff(request) != nil { return Self.redirect("/console") }
            return pages.render("Sign in", ["signIn": true], staff: nil, ceremony: true)
        }
        routes.post("/console/sign-in/options") { request, _ in
            try sameOrigin(request)
            return JSONResponse(
                .ok, PasskeyRequestOptionsBody(options: try console.signInOptions(), relyingPartyID: console.relyingParty.id))
        }
        routes.post("/console/sign-in") { request, context in
            try sameOrigin(request)
            let body = try await request.decodeJSON(PasskeyAssertionRequest.self, context: context)
            let (token, _) = try await console.signIn(credential: body.credential, client: context.client)
            var response = try JSONResponse(.ok, ["redirect": JSONValue.string("/console")]).response(from: request, context: context)
            response.headers[values: .setCookie].append(Self.cookie(token))
            return response
        }
        routes.get("/console/invitation") { request, _ in
            let token = request.uri.queryParameters["token"].map(String.init) ?? ""
            guard let invited = try? await console.invitation(token: token) else {
                return pages.problem(StaffError.invitationExpired.message, staff: nil, status: .gone)
            }
            return pages.render(
                "Create your passkey",
                ["invitation": ["invitedEmail": invited.email ?? "", "invitedRole": invited.role.rawValue, "token": token]], staff: nil,
                ceremony: true)
        }
        routes.post("/console/invitation/options") { request, context in
            try sameOrigin(request)
            let body = try await request.decodeJSON(InvitationRequest.self, context: context)
            return JSONResponse(
                .ok,
                PasskeyCreationOptionsBody(
                    options: try await console.registrationOptions(token: body.token), relyingPartyID: console.relyingParty.id,
                    relyingPartyName: console.relyingPartyName))
        }
        routes.post("/console/invitation") { request, context in
            try sameOrigin(request)
            let body = try await request.decodeJSON(InvitationRegistration.self, context: context)
            _ = try await console.register(token: body.token, credential: body.credential)
            return JSONResponse(.ok, ["redirect": JSONValue.string("/console/sign-in")])
        }
        routes.post("/console/confirm/options") { request, _ in
            let staff = try await changing(request, token: request.headers[.csrfToken])
            return JSONResponse(
                .ok,
                PasskeyRequestOptionsBody(options: try await console.confirmationOptions(staff), relyingPartyID: console.relyingParty.id))
        }
        routes.post("/console/sign-out") { request, _ in
            try await posting(request) { staff, _ in
                try await console.signOut(staff)
                var response = Self.redirect("/console/sign-in")
                response.headers[values: .setCookie].append(Self.cookie(""))
                return response
            }
        }
        routes.get("/console/accounts") { request, _ in
            guard let staff = try await staff(request) else { return Self.redirect("/console/sign-in") }
            if let refused = crossSite(request, staff) { return refused }
            return try await page(staff) { try await results(request, staff) }
        }
        routes.get("/console/accounts/:id") { request, context in
            guard let staff = try await staff(request) else { return Self.redirect("/console/sign-in") }
            if let refused = crossSite(request, staff) { return refused }
            return try await page(staff) { try await accountPage(request, context, staff) }
        }
        routes.get("/console/accounts/:id/:action") { request, context in
            guard let staff = try await staff(request) else { return Self.redirect("/console/sign-in") }
            return try await page(staff) { try confirmation(request, context, staff) }
        }
        routes.post("/console/accounts/:id/:action") { request, context in
            try await posting(request) { staff, form in try await page(staff) { try await act(form, context, staff) } }
        }
        return routes
    }

    // MARK: Sessions, tokens, origins

    /// The signed-in staff member of the request's cookie, if any.
    func staff(_ request: Request) async throws -> StaffConsole.StaffSession? {
        guard let token = request.cookies[Self.cookieName]?.value, !token.isEmpty else { return nil }
        return try await console.authenticate(token: token)
    }

    /// A change: from the console's own origin, by a signed-in staff member, with the session's
    /// form token.
    func changing(_ request: Request, token: String?) async throws -> StaffConsole.StaffSession {
        try sameOrigin(request)
        guard let staff = try await staff(request) else {
            throw APIError(.unauthorized, .init("session_ended"), StaffError.sessionEnded.message)
        }
        guard console.checksCSRF(token, of: staff) else {
            throw APIError(.forbidden, .init("csrf_refused"), "This form has expired. Go back, reload the page and try again.")
        }
        return staff
    }

    /// A form's change: its fields, checked by `changing` (a refusal is a page, as the form's answer).
    func posting(
        _ request: Request, _ body: (StaffConsole.StaffSession, [String: String]) async throws -> Response
    ) async throws -> Response {
        let form = try await Self.form(request)
        let staff: StaffConsole.StaffSession
        do {
            staff = try await changing(request, token: form["csrf"])
        } catch let refused as APIError {
            return pages.problem(refused.message, staff: nil, status: refused.status)
        }
        return try await body(staff, form)
    }

    /// Refuses a change whose `Origin` is not the console's, whatever it carries (a form token
    /// a page of another site got hold of, or a cookie a browser sent along).
    func sameOrigin(_ request: Request) throws {
        guard request.headers[.origin] == console.origin else {
            throw APIError(.forbidden, .init("cross_origin"), "Changes are made from the console's own pages only.")
        }
    }

    /// A look (a search, an account page) is recorded under the staff member's name, so it
    /// must be theirs: a request another site made their browser send (an `<img>` on a sibling
    /// subdomain, which `SameSite` lets through) is refused, by the `Sec-Fetch-Site` browsers set.
    func crossSite(_ request: Request, _ staff: StaffConsole.StaffSession) -> Response? {
        guard let site = request.headers[.secFetchSite], site != "same-origin", site != "none" else { return nil }
        return pages.problem("Open the console's pages from the console itself.", staff: staff, status: .forbidden)
    }

    /// A page's work, its refusals as pages of their own. What it records names the staff
    /// member as its actor (`staff:<id>`), as the API's name their key.
    func page(_ staff: StaffConsole.StaffSession, _ body: () async throws -> Response) async throws -> Response {
        var metadata = EventMetadata.current
        metadata.actor = "staff:\(staff.staffID.lowercased)"
        do {
            return try await EventMetadata.$current.withValue(metadata) { try await body() }
        } catch let error as APIError {
            return pages.problem(error.message, staff: staff, status: error.status)
        } catch {
            guard let translated = ErrorTranslation.apiError(for: error) else { throw error }
            return pages.problem(translated.message, staff: staff, status: translated.status)
        }
    }

    static func cookie(_ token: String) -> String {
        let age = token.isEmpty ? 0 : Int(StaffConsole.sessionLifetime)
        return "\(cookieName)=\(token); Path=/; Max-Age=\(age); Secure; HttpOnly; SameSite=Strict"
    }

    static func redirect(_ location: String) -> Response {
        var headers = ConsolePages.headers
        headers[.location] = location
        return Response(status: .seeOther, headers: headers)
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "no-cache", HTTPField.Name("X-Content-Type-Options")!: "nosniff"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func form(_ request: Request) async throws -> [String: String] {
        FormFields.parse(String(buffer: try await request.collectBody()))
    }
}

/// `{token}`: an invitation's.
struct InvitationRequest: Decodable {
    let token: String
}

/// `{token, credential}`: the passkey an invitation registers.
struct InvitationRegistration: Decodable {
    let token: String
    let credential: RegistrationResponseJSON
}
