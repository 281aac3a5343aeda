import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerImages
import NIOCore

/// The account's picture (docs/accounts.md "Avatars"): `PUT` and `DELETE /me/avatar`, and the
/// public `/avatars/{user_id}.jpg?v={etag}` and `/avatars/{user_id}.svg` the `avatar_url`s name.
public struct AvatarController: Sendable {
    let avatars: AvatarService
    let accounts: AccountService

    public init(avatars: AvatarService, accounts: AccountService) {
        self.avatars = avatars
        self.accounts = accounts
    }

    static let tooLarge = APIError(.contentTooLarge, .payloadTooLarge, "The picture is larger than 5 MiB.")
    static let noPicture = APIError(.notFound, .notFound, "No such picture.")
    /// The media types a picture may be sent as: its bytes say which it is (`AvatarImage`).
    static let acceptedTypes: Set = ["image/jpeg", "image/png", "image/webp", "application/octet-stream"]

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        let signedIn = routes.group().add(middleware: SessionMiddleware(accounts: accounts))
        signedIn.put("/me/avatar") { request, context in
            let session = try context.requireSession()
            // Refused before anything is counted or read: a body declared too large, or declared to be something else.
            if let length = request.headers[.contentLength].flatMap(Int.init), length > AvatarImage.maximumBytes { throw Self.tooLarge }
            if let type = request.headers[.contentType], !Self.acceptedTypes.contains(Self.mediaType(type)) {
                throw AvatarImageError(.unsupported)
            }
            let url = try await avatars.upload(for: session, client: context.client) { try await Self.body(of: request) }
            return JSONResponse(.ok, ["avatar_url": .string(url)])
        }
        signedIn.delete("/me/avatar") { _, context in
            try await avatars.remove(for: try context.requireSession())
            return Response(status: .noContent)
        }
        routes.get("/avatars/:file") { request, context in
            let file = context.parameters.get("file") ?? ""
            if file.hasSuffix(".svg") {
                guard let tile = try await avatars.tile(userID: String(file.dropLast(4))) else { throw Self.noPicture }
                return Self.picture(Array(tile.svg().utf8), form: .tile, maxAge: 300, etag: nil, request: request)
            }
            guard file.hasSuffix(".jpg"), let version = request.uri.queryParameters["v"].map(String.init),
                let jpeg = try await avatars.picture(userID: String(file.dropLast(4)), etag: version)
            else { throw Self.noPicture }
            return Self.picture(jpeg, form: .jpeg, maxAge: 86400, etag: version, request: request)
        }
        return routes
    }

    static let tooSlow = APIError(.requestTimeout, .init("request_timeout"), "The picture took too long to arrive. Try again.")
    /// How long a picture may take to arrive: a client dripping its body must not hold a
    /// place of the gate (`AvatarImage.Gate`) for long.
    static let bodyDeadline: Duration = .seconds(30)

    /// The request's body, at most `AvatarImage.maximumBytes` (else `413`), within `bodyDeadline` (else `408`).
    static func body(of request: Request) async throws -> [UInt8] {
        try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                do {
                    return Array(buffer: try await request.body.collect(upTo: AvatarImage.maximumBytes))
                } catch is NIOTooManyBytesError {
                    throw Self.tooLarge
                }
            }
            group.addTask {
                try await Task.sleep(for: bodyDeadline)
                return nil
            }
            defer { group.cancelAll() }
            guard let bytes = try await group.next() ?? nil else { throw Self.tooSlow }
            return bytes
        }
    }

    /// `Content-Type` without its parameters, lower-cased.
    static func mediaType(_ header: String) -> String {
        header.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
    }

    /// A picture's two media types: its own, and the generic one an API client may ask for
    /// with `Accept` (the same bytes; openapi-python-client reads only generic types, as
    /// `/openapi.yaml`'s `text/plain` form, `OpenAPIController`).
    struct Form {
        let type: String
        let generic: String
        /// Parameters either type carries (the SVG's charset).
        let parameters: String

        static let jpeg = Form(type: "image/jpeg", generic: "application/octet-stream", parameters: "")
        static let tile = Form(type: "image/svg+xml", generic: "text/plain", parameters: "; charset=utf-8")

        /// The type `request`'s `Accept` prefers: the generic one only when asked for over the picture's own.
        func contentType(for request: Request) -> String {
            (AcceptedForm.prefers(generic, over: type, in: request) ? generic : type) + parameters
        }
    }

    /// A picture as served: cached by the browser only (it is personal data: no shared cache
    /// keeps it past a removal or a purge), never sniffed as anything else, and an SVG that
    /// could run nothing even were it opened as a page.
    static func picture(_ bytes: [UInt8], form: Form, maxAge: Int, etag: String?, request: Request) -> Response {
        var headers: HTTPFields = [
            .contentType: form.contentType(for: request), .vary: "Accept",
            .cacheControl: "private, max-age=\(maxAge)", .contentTypeOptions: "nosniff",
            .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; sandbox",
        ]
        if let etag {
            headers[.eTag] = "\"\(etag)\""
            if request.headers[.ifNoneMatch]?.contains(etag) == true { return Response(status: .notModified, headers: headers) }
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
