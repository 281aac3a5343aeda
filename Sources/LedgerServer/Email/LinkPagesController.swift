import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity
import NIOCore

/// `GET` and `POST` of `/verify-email`, `/reset-password`, `/confirm-email-change` and
/// `/revert-email`, where the email links point, `GET` of `/reauth` (a page without a form: only
/// the app that asked can use a re-auth link), and the app-link documents. A `GET` only shows
/// the page (mail scanners prefetch links): the form, or at once the expired page for a link
/// that is used, past its time or unknown (nobody types a new password twice to learn that).
/// The token is used by the form's `POST`, which works without JavaScript.
public struct LinkPagesController: Sendable {
    let accounts: AccountService
    let pages: LinkPages
    /// The pages' language when `Accept-Language` names none of the service's.
    var defaultLanguage: Language { accounts.environment.policies.defaultLanguage }

    public init(accounts: AccountService, pages: LinkPages) {
        self.accounts = accounts
        self.pages = pages
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        for kind in LinkPages.Kind.allCases {
            let show: @Sendable (Request, LedgerRequestContext) async throws -> Response = { request, _ in
                let copy = LinkPageCopy.preferred(request.headers[.acceptLanguage], fallback: defaultLanguage)
                guard let token = request.uri.queryParameters["token"].map(String.init), !token.isEmpty, let page = copy.pages[kind],
                    // Should the lookup fail (the database busy), the form: its POST will tell.
                    (try? await accounts.isLinkUsable(token: token, purposes: kind.linkPurposes)) != false
                else {
                    return pages.expired(kind, copy: copy)
                }
                guard kind.finishesInBrowser else {
                    return pages.render(kind, .init(title: page.title, lead: page.lead), copy: copy, status: .ok)
                }
                return pages.render(
                    kind,
                    .init(title: page.title, lead: page.lead, token: token, asksPassword: kind.asksPassword, button: page.button),
                    copy: copy, status: .ok)
            }
            routes.get(RouterPath(kind.rawValue), use: show)
            // Mail scanners also check links with HEAD: the page's status and headers, no body.
            routes.head(RouterPath(kind.rawValue)) { request, context in try await show(request, context).createHeadResponse() }
            guard kind.finishesInBrowser else { continue }
            routes.post(RouterPath(kind.rawValue)) { request, context in
                do {
                    return try await submit(kind, request: request, context: context)
                } catch {
                    return trouble(kind, error, request: request, context: context)
                }
            }
        }
        routes.get("/pages/style.css") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "public, max-age=3600"],
                body: .init(byteBuffer: ByteBuffer(string: pages.stylesheet)))
        }
        routes.get("/.well-known/apple-app-site-association") { _, _ in try Self.json(pages.appleAppSiteAssociation) }
        routes.get("/.well-known/assetlinks.json") { _, _ in try Self.json(pages.assetLinks) }
        return routes
    }

    /// The form's `POST`: the link's work, then the page that says how it went.
    func submit(_ kind: LinkPages.Kind, request: Request, context: LedgerRequestContext) async throws -> Response {
        let copy = LinkPageCopy.preferred(request.headers[.acceptLanguage], fallback: defaultLanguage)
        let body = try await request.collectBody()
        let fields = FormFields.parse(String(buffer: body))
        guard let token = fields["token"], !token.isEmpty, let page = copy.pages[kind] else { return pages.expired(kind, copy: copy) }
        var done = LinkPages.Content(title: page.title, done: page.done)
        do {
            switch kind {
            // The page signs nobody in: it is the service's, not the app's (the app posts the
            // token itself to sign in: docs/accounts.md "Links that sign in").
            case .verifyEmail: _ = try await accounts.verifyEmail(token: token)
            case .confirmEmailChange: _ = try await accounts.confirmEmailChange(token: token)
            case .reauth: return pages.expired(kind, copy: copy)  // not routed: the app confirms it
            case .resetPassword, .revertEmail:
                // A dead link is the expired page whatever the passwords say.
                guard (try? await accounts.isLinkUsable(token: token, purposes: kind.linkPurposes)) != false else {
                    return pages.expired(kind, copy: copy)
                }
                let password = fields["new_password"] ?? ""
                var retry = LinkPages.Content(title: page.title, lead: page.lead, token: token, asksPassword: true, button: page.button)
                guard password == fields["confirm_password"] else {
                    retry.errors = [copy.mismatch]
                    return pages.render(kind, retry, copy: copy, status: .unprocessableContent)
                }
                do {
                    if kind == .resetPassword {
                        let reset = try await accounts.resetPassword(token: token, newPassword: password)
                        done.also = copy.removed(reset.removedMethods, twoFactorReset: reset.twoFactorReset)
                    } else {
                        let revert = try await accounts.revertEmail(token: token, newPassword: password)
                        done.also = copy.removed(revert.removedMethods, twoFactorReset: revert.twoFactorReset)
                    }
                } catch let failure as AccountService.ValidationFailure {
                    // The API's own rule messages, every one the password breaks, in the page's language.
                    retry.errors = failure.problems.map { ErrorMessages.builtIn.translate($0.message, to: copy.language) }
                    return pages.render(kind, retry, copy: copy, status: .unprocessableContent)
                }
            }
            return pages.render(kind, done, copy: copy, status: .ok)
        } catch let error as IdentityError where error.code == .linkExpired {
            return pages.expired(kind, copy: copy)
        }
    }

    /// Any other failure (the service busy, the address taken meanwhile, a body too large) as a
    /// page in the same language and with the same headers, never a JSON error: the message the
    /// API would give, and the form again where trying again can help.
    func trouble(_ kind: LinkPages.Kind, _ error: any Error, request: Request, context: LedgerRequestContext) -> Response {
        let copy = LinkPageCopy.preferred(request.headers[.acceptLanguage], fallback: defaultLanguage)
        let translated = ErrorTranslation.apiError(for: error)?.inLanguage(copy.language)
        if translated == nil {
            context.logger.error("link page failed", metadata: ["error_type": "\(type(of: error))", "error": "\(error)"])
        }
        let page = copy.pages[kind]
        let content = LinkPages.Content(
            title: page?.title ?? copy.expiredTitle, lead: page?.lead, errors: [translated?.message ?? copy.unexpected])
        var response = pages.render(kind, content, copy: copy, status: translated?.status ?? .internalServerError)
        if let retryAfter = translated?.headers[.retryAfter] { response.headers[.retryAfter] = retryAfter }
        return response
    }

    /// A `.well-known` document, or `404` when the apps it names are not configured.
    static func json(_ document: Any?) throws -> Response {
        guard let document else { throw APIError(.notFound, .notFound, "Not configured.") }
        let data = try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: Array(data))))
    }
}
