import Foundation
import HTTPTypes
import Hummingbird

/// A JSON response with the API's content type, for bodies built from `JSONValue` or `Encodable`.
///
/// The answers asked for most (`/me`, `/me/auth-methods`, introspection, errors) are built from
/// `JSONValue`, which renders without Foundation's `JSONEncoder`.
public struct JSONResponse: ResponseGenerator, Sendable {
    let status: HTTPResponse.Status
    let bytes: [UInt8]

    public init(_ status: HTTPResponse.Status, _ object: [String: JSONValue]) {
        self.status = status
        self.bytes = JSONValue.object(object).encoded()
    }

    init(_ status: HTTPResponse.Status, _ body: some JSONObjectBody) {
        self.init(status, body.fields)
    }

    public init(_ status: HTTPResponse.Status, encoding value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        self.status = status
        self.bytes = Array(try encoder.encode(value))
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// A response body that is one JSON object of fixed fields.
protocol JSONObjectBody {
    var fields: [String: JSONValue] { get }
}
