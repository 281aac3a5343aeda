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
    /// Headers beside the content type (`Cache-Control: no-store` on an answer carrying a secret).
    var headers: HTTPFields = [:]

    public init(_ status: HTTPResponse.Status, _ object: [String: JSONValue]) {
        self.status = status
        self.bytes = JSONValue.object(object).encoded()
    }

    init(_ status: HTTPResponse.Status, _ body: some JSONObjectBody) {
        self.init(status, body.fields)
    }

    public init(_ status: HTTPResponse.Status, encoding value: some Encodable, headers: HTTPFields = [:]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        self.status = status
        self.bytes = Array(try encoder.encode(value))
        self.headers = headers
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// A response body that is one JSON object of fixed fields.
protocol JSONObjectBody {
    var fields: [String: JSONValue] { get }
}
