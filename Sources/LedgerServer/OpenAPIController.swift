import Foundation
import HTTPTypes
import Hummingbird

/// Serves the OpenAPI document at `/openapi.yaml`.
public struct OpenAPIController: Sendable {
    let document: [UInt8]

    public init(document: [UInt8]) {
        self.document = document
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.get("/openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: document)))
        }
        return routes
    }
}
