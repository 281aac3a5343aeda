import Foundation
import HTTPTypes
import Hummingbird
import LedgerCore

extension Request {
    /// Reads a JSON body of at most 64 KiB into `type`. Too large → `413 payload_too_large`;
    /// not JSON, invalid UTF-8, a NUL character (which no PostgreSQL text holds), a missing field
    /// or a wrong type → `400 invalid_request` naming the field. Unknown fields are ignored.
    func decodeJSON<T: Decodable>(_ type: T.Type, context: LedgerRequestContext) async throws -> T {
        try Self.decodeJSON(T.self, from: try await collectBody())
    }

    /// A body already collected, read as `decodeJSON` reads it.
    static func decodeJSON<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer) throws -> T {
        do {
            return try Self.bodyDecoder.decode(T.self, from: Array(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw APIError(.badRequest, .invalidRequest, Self.describe(error))
        }
    }

    /// The body, JSON or a form's: at most 64 KiB, else `413 payload_too_large`.
    func collectBody() async throws -> ByteBuffer {
        do {
            return try await body.collect(upTo: APILimits.maximumBodyBytes)
        } catch {
            throw APIError(.contentTooLarge, .payloadTooLarge, "The request body is larger than 64 KiB.")
        }
    }

    /// The payload decoder rather than Foundation's: the same errors, at a fraction of the cost
    /// per request. Dates come only as `JSONDecoder`'s default strategy reads them (numbers);
    /// request bodies carry their times as RFC 3339 strings and parse them themselves.
    private static let bodyDecoder = JSONPayloadDecoder(parseDate: { _ in nil }, refusesNUL: true)

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, _):
            return "The field \(key.stringValue) is required."
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return path(context).isEmpty ? "The request body must be a JSON object." : "The field \(path(context)) has the wrong type."
        case .dataCorrupted(let context) where context.debugDescription == JSONPayloadDecoder.nulDescription:
            return path(context).isEmpty
                ? "The request body holds a NUL character." : "The field \(path(context)) holds a NUL character."
        case .dataCorrupted:
            return "The request body is not valid JSON."
        @unknown default:
            return "The request body is not valid JSON."
        }
    }
}
