import Foundation
import HTTPTypes
import Hummingbird
import LedgerPostgres
import Logging

/// Turns anything a handler throws into the API's error shape: typed errors keep their
/// status, framework errors become `400`/`404`/`413`, and the unexpected becomes a `500`
/// whose details go to the log only.
enum ErrorTranslation {
    static func apiError(for error: any Error) -> APIError? {
        switch error {
        case let error as APIError:
            return error
        case let error as HTTPError:
            switch error.status {
            case .notFound:
                return APIError(.notFound, .notFound, "No such endpoint.")
            case .contentTooLarge:
                return APIError(.contentTooLarge, .payloadTooLarge, "The request body is larger than 64 KiB.")
            case .methodNotAllowed:
                return APIError(.methodNotAllowed, .methodNotAllowed, "This endpoint does not accept that method.")
            case .badRequest:
                return APIError(.badRequest, .invalidRequest, "The request body is not valid JSON of the expected shape.")
            case .unsupportedMediaType:
                return APIError(.unsupportedMediaType, .invalidRequest, "Send JSON (Content-Type: application/json).")
            default:
                guard (400..<500).contains(error.status.code) else { return nil }
                return APIError(error.status, .invalidRequest, error.body ?? "The request cannot be served.")
            }
        case is DecodingError:
            return APIError(.badRequest, .invalidRequest, "The request body is not valid JSON of the expected shape.")
        case let error as PostgresError where error.code == .connectionFailed || error.code == .connectionLost:
            return APIError(.serviceUnavailable, .unavailable, "The service is temporarily unavailable. Try again shortly.",
                             headers: [.retryAfter: "1"])
        default:
            return nil
        }
    }

    static func response(for error: any Error, request: Request, context: LedgerRequestContext) throws -> Response {
        if let apiError = apiError(for: error) {
            return try apiError.response(from: request, context: context)
        }
        context.logger.error("unhandled error", metadata: ["error_type": "\(type(of: error))", "error": "\(error)"])
        return try APIError(.internalServerError, .internalError, "Something went wrong on our side.")
            .response(from: request, context: context)
    }
}
