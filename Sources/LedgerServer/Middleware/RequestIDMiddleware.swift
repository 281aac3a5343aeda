import Foundation
import HTTPTypes
import Hummingbird
import LedgerCore
import LedgerIdentity
import Logging

/// Gives every request an id (the caller's `X-Request-Id` when it is sane), puts it on the
/// logger and echoes it on the response, errors included; logs one line per request.
///
/// The access line has the method, the path without its query (queries may hold an email),
/// the status and the time taken: nothing secret.
public struct RequestIDMiddleware: RouterMiddleware {
    public typealias Context = LedgerRequestContext

    /// Where request latencies go (none in router tests that do not ask for it).
    let metrics: LedgerMetrics?
    /// The language of an error's message when `Accept-Language` names none of the service's
    /// (`LEDGER_DEFAULT_LOCALE`).
    let defaultLanguage: Language

    public init(metrics: LedgerMetrics? = nil, defaultLanguage: Language = .en) {
        self.metrics = metrics
        self.defaultLanguage = defaultLanguage
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        let requestID = Self.acceptable(request.headers[.requestID]) ?? UUID.random().lowercased
        context.requestID = requestID
        context.logger[metadataKey: "request_id"] = .string(requestID)
        let started = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = try ErrorTranslation.response(for: error, request: request, context: context, defaultLanguage: defaultLanguage)
        }
        response.headers[.requestID] = requestID
        let elapsed = ContinuousClock.now - started
        metrics?.observeRequest(
            route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: Int(response.status.code),
            duration: elapsed)
        context.logger.info(
            "request",
            metadata: [
                "method": "\(request.method)", "path": "\(request.uri.path)", "status": "\(response.status.code)",
                "ms": "\(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)",
            ])
        return response
    }

    /// Up to 128 characters of letters, digits, `-`, `_`, `.`; anything else is replaced.
    static func acceptable(_ value: String?) -> String? {
        guard let value, !value.isEmpty, value.utf8.count <= 128,
            value.utf8.allSatisfy({
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a) || $0 == 0x2d || $0 == 0x5f
                    || $0 == 0x2e
            })
        else { return nil }
        return value
    }
}

extension HTTPField.Name {
    static let requestID = Self("X-Request-Id")!
}
