import Foundation
import HTTPTypes
import Hummingbird
import LedgerIdentity
import Mustache
import NIOCore

/// The pages behind the email links (docs/architecture.md "Link pages"): server-rendered HTML
/// from the Mustache templates in `Resources/pages`, with the headers every page carries.
public struct LinkPages: Sendable {
    /// The links, by the path their email points at.
    public enum Kind: String, Sendable, CaseIterable {
        case verifyEmail = "/verify-email"
        case resetPassword = "/reset-password"
        case confirmEmailChange = "/confirm-email-change"
        case revertEmail = "/revert-email"
        /// "Verify it's you": only the app that asked can use it (the grant is its session's),
        /// so its page has no form and says where to open it.
        case reauth = "/reauth"

        /// Whether the page finishes the link's work in the browser.
        var finishesInBrowser: Bool { self != .reauth }

        /// Whether the form takes a new password twice: a reset, and a revert (whoever changed
        /// the email may know the old password).
        var asksPassword: Bool { self == .resetPassword || self == .revertEmail }

        /// The links this page opens.
        var linkPurposes: [AccountState.PendingLink.Purpose] {
            switch self {
            case .verifyEmail: [.verifyEmail]
            case .resetPassword: [.passwordReset]
            case .confirmEmailChange: [.emailChange, .emailAdd]
            case .revertEmail: [.emailRevert]
            case .reauth: [.reauth]
            }
        }
    }

    /// Where the app is installed from, and who may open the links (`.well-known`).
    public struct Apps: Sendable {
        public var appStoreURL: String?
        public var playStoreURL: String?
        /// `TEAMID.bundle.id` values.
        public var iosAppIDs: [String]
        public var androidPackage: String?
        /// SHA-256 fingerprints of the Android signing certificates (`AB:CD:…`).
        public var androidCertificates: [String]

        public init(
            appStoreURL: String? = nil, playStoreURL: String? = nil, iosAppIDs: [String] = [], androidPackage: String? = nil,
            androidCertificates: [String] = []
        ) {
            self.appStoreURL = appStoreURL
            self.playStoreURL = playStoreURL
            self.iosAppIDs = iosAppIDs
            self.androidPackage = androidPackage
            self.androidCertificates = androidCertificates
        }
    }

    let library: MustacheLibrary
    let stylesheet: String
    let product: String
    public let apps: Apps

    /// The headers of every page: nothing else may load, the token in the URL never leaves in a
    /// `Referer`, no frame may hold the page, and no cache keeps it.
    static let headers: HTTPFields = [
        .contentType: "text/html; charset=utf-8",
        HTTPField.Name("Content-Security-Policy")!: "default-src 'self'",
        HTTPField.Name("Referrer-Policy")!: "no-referrer", HTTPField.Name("X-Frame-Options")!: "DENY",
        .cacheControl: "no-store", HTTPField.Name("X-Content-Type-Options")!: "nosniff",
    ]

    /// Loads the templates shipped with the service; throws when they are missing.
    public init(product: String, apps: Apps) throws {
        guard let directory = Bundle.module.url(forResource: "pages", withExtension: nil),
            let page = try? String(contentsOf: directory.appendingPathComponent("page.mustache"), encoding: .utf8),
            let stylesheet = try? String(contentsOf: directory.appendingPathComponent("style.css"), encoding: .utf8)
        else { throw ConfigurationError("the link pages' templates are missing from the service's resources") }
        self.library = MustacheLibrary(templates: ["page": try MustacheTemplate(string: page)])
        self.stylesheet = stylesheet
        self.product = product
        self.apps = apps
    }

    /// What a page shows.
    struct Content {
        var title: String
        var lead: String?
        var errors: [String] = []
        var done: String?
        /// What else the work did, said after `done` (a reset or revert's removed methods).
        var also: String?
        /// The form, when the page offers one: its token, and whether it asks for a password.
        var token: String?
        var asksPassword = false
        var button = ""
    }

    /// The page for `kind` in `copy`'s language.
    func render(_ kind: Kind, _ content: Content, copy: LinkPageCopy, status: HTTPResponse.Status) -> Response {
        var context: [String: Any] = [
            "lang": copy.lang, "product": product, "title": content.title, "hasErrors": !content.errors.isEmpty,
            "errors": content.errors, "installTitle": copy.installTitle,
            "installText": kind.finishesInBrowser ? copy.installText : copy.installTextAppOnly,
        ]
        if let lead = content.lead { context["lead"] = lead }
        if let done = content.done { context["done"] = done }
        if let also = content.also { context["also"] = also }
        if let url = apps.appStoreURL { context["appStoreURL"] = url }
        if let url = apps.playStoreURL { context["playStoreURL"] = url }
        // "Install the app" only where there is an app to install: without a store's address
        // the page would offer nothing to follow.
        context["offersApp"] = apps.appStoreURL != nil || apps.playStoreURL != nil
        if let token = content.token {
            var form: [String: Any] = ["action": kind.rawValue, "token": token, "button": content.button]
            if content.asksPassword {
                form["passwords"] = [
                    "newPasswordLabel": copy.newPasswordLabel, "confirmPasswordLabel": copy.confirmPasswordLabel, "rules": copy.rules,
                ]
            }
            context["form"] = form
        }
        let html = library.render(context, withTemplate: "page") ?? ""
        return Response(status: status, headers: Self.headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// The page of a link that is past its time, used, or not one of ours.
    func expired(_ kind: Kind, copy: LinkPageCopy) -> Response {
        render(kind, Content(title: copy.expiredTitle, lead: copy.pages[kind]?.expired), copy: copy, status: .gone)
    }

    /// `/.well-known/apple-app-site-association`: the iOS apps that open the link paths, and
    /// that may use this domain's passkeys (`webcredentials`).
    var appleAppSiteAssociation: [String: Any]? {
        guard !apps.iosAppIDs.isEmpty else { return nil }
        let components = Kind.allCases.map(\.rawValue).map { ["/": $0, "comment": "the \($0.dropFirst()) link"] }
        return [
            "applinks": ["details": [["appIDs": apps.iosAppIDs, "components": components]]],
            "webcredentials": ["apps": apps.iosAppIDs],
        ]
    }

    /// `/.well-known/assetlinks.json`: the Android app that may open this site's links (the
    /// paths themselves are the app's intent filters) and share its sign-in credentials,
    /// passkeys among them (`get_login_creds`).
    var assetLinks: [[String: Any]]? {
        guard let package = apps.androidPackage, !apps.androidCertificates.isEmpty else { return nil }
        return [
            [
                "relation": ["delegate_permission/common.handle_all_urls", "delegate_permission/common.get_login_creds"],
                "target": ["namespace": "android_app", "package_name": package, "sha256_cert_fingerprints": apps.androidCertificates],
            ]
        ]
    }
}
