import Foundation
import HTTPTypes
import Hummingbird

/// An error answered to a client in the one shape of openapi.yaml (`Error`):
/// `{"error": "code", "message": "Human copy", ...extra fields}`.
public struct APIError: Error, HTTPResponseError, Sendable {
    /// The machine-readable `error` field.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let invalidRequest = Code("invalid_request")
        public static let validationFailed = Code("validation_failed")
        public static let payloadTooLarge = Code("payload_too_large")
        public static let unsupportedImage = Code("unsupported_image")
        public static let notFound = Code("not_found")
        public static let methodNotAllowed = Code("method_not_allowed")
        public static let unauthorized = Code("unauthorized")
        public static let forbidden = Code("forbidden")
        public static let notReady = Code("not_ready")
        /// Busy: a pool or queue with nothing to spare now (or an outside service that cannot answer).
        public static let serviceUnavailable = Code("service_unavailable")
        /// The database takes no writes now: no primary (a failover under way) or none reachable.
        public static let unavailable = Code("unavailable")
        public static let internalError = Code("internal_error")
    }

    public let status: HTTPResponse.Status
    public let code: Code
    public let message: String
    /// Further top-level fields, such as `retry_after` or `errors`.
    public var extra: [String: JSONValue]
    /// Extra response headers, such as `Retry-After`.
    public var headers: HTTPFields

    public init(
        _ status: HTTPResponse.Status, _ code: Code, _ message: String,
        extra: [String: JSONValue] = [:], headers: HTTPFields = [:]
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra
        self.headers = headers
    }

    public var body: JSONValue {
        var object = extra
        object["error"] = .string(code.rawValue)
        object["message"] = .string(message)
        return .object(object)
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: body.encoded())))
    }
}
