import Foundation
import HTTPTypes
import Hummingbird

/// Serves the OpenAPI document at `/openapi.yaml`: as `application/yaml`, or as `text/plain`
/// when `Accept` asks for that (the same bytes; generators that cannot read YAML read text).
public struct OpenAPIController: Sendable {
    let document: [UInt8]

    public init(document: [UInt8]) {
        self.document = document
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.get("/openapi.yaml") { request, _ in
            let plainText = AcceptedForm.prefers("text/plain", over: "application/yaml", in: request)
            // The form follows `Accept`: a shared cache must keep them apart.
            return Response(
                status: .ok,
                headers: [.contentType: plainText ? "text/plain; charset=utf-8" : "application/yaml; charset=utf-8", .vary: "Accept"],
                body: .init(byteBuffer: ByteBuffer(bytes: document)))
        }
        return routes
    }
}
