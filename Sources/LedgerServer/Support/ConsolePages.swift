import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import Mustache
import NIOCore

/// The console's pages (`Resources/console`): one swift-mustache template whose sections are the
/// pages, its stylesheet, and the passkey ceremonies' script, the only JavaScript it has. Every
/// page is sent with the link pages' headers (`LinkPages.headers`).
public struct ConsolePages: Sendable {
    let library: MustacheLibrary
    let stylesheet: String
    let script: String
    let product: String

    public init(product: String) throws {
        guard let directory = Bundle.module.url(forResource: "console", withExtension: nil),
            let page = try? String(contentsOf: directory.appendingPathComponent("console.mustache"), encoding: .utf8),
            let stylesheet = try? String(contentsOf: directory.appendingPathComponent("console.css"), encoding: .utf8),
            let script = try? String(contentsOf: directory.appendingPathComponent("console.js"), encoding: .utf8)
        else { throw ConfigurationError("the console's templates are missing from the service's resources") }
        self.library = MustacheLibrary(templates: ["console": try MustacheTemplate(string: page)])
        self.stylesheet = stylesheet
        self.script = script
        self.product = product
    }

    /// A page: `content` holds its section (`signIn`, `home`, `account`, …) and what it shows;
    /// `staff`, when signed in, the bar's search and sign-out (with the session's form token).
    func render(
        _ title: String, _ content: [String: Any], staff: StaffConsole.StaffSession?, status: HTTPResponse.Status = .ok,
        ceremony: Bool = false, headers extra: HTTPFields = [:]
    ) -> Response {
        var context = content
        context["title"] = title
        context["product"] = product
        context["ceremony"] = ceremony
        if let staff {
            context["staff"] = ["email": staff.email, "role": staff.role.rawValue, "csrf": staff.csrfToken]
        }
        var headers = Self.headers
        headers.append(contentsOf: extra)
        let html = library.render(context, withTemplate: "console") ?? ""
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// The link pages' headers, with a referrer policy of `same-origin` (a form posted under
    /// `no-referrer` carries `Origin: null`, and every change is checked by its `Origin`) and a
    /// stricter content security policy.
    static let headers: HTTPFields = {
        var headers = LinkPages.headers
        headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        // Forms post only here, no `<base>` moves them, and no page frames the console.
        headers[HTTPField.Name("Content-Security-Policy")!] =
            "default-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
        return headers
    }()

    /// A page that says only what went wrong.
    func problem(_ message: String, staff: StaffConsole.StaffSession?, status: HTTPResponse.Status) -> Response {
        render("Something needs attention", ["problem": message], staff: staff, status: status)
    }
}
