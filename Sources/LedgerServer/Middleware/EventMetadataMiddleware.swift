import Foundation
import HTTPTypes
import Hummingbird
import LedgerCore
import LedgerCrypto
import LedgerEvents

/// Sets what every event a request causes records besides its payload (docs/architecture.md "Event store rules": actor,
/// correlation, IP hash, user-agent class; never personal data): the request id as the
/// correlation id, the client address (which the event store stores only as a hash under the
/// account's own key), and a coarse class of the user agent.
/// The actor is named nearer the work: the account for its own commands, the API key for a
/// service's calls.
///
/// Runs inside `RequestIDMiddleware` and `ClientAddressMiddleware`, whose id and address it records.
public struct EventMetadataMiddleware: RouterMiddleware {
    public typealias Context = LedgerRequestContext

    public init() {}

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var metadata = EventMetadata(
            correlationID: context.requestID.isEmpty ? nil : context.requestID,
            userAgentClass: Self.userAgentClass(request.headers[.userAgent]))
        metadata.clientAddress = context.clientAddress
        return try await EventMetadata.$current.withValue(metadata) { try await next(request, context) }
    }

    /// `ios`, `android`, `web` or `other`, from the `User-Agent` header; nil without one.
    static func userAgentClass(_ userAgent: String?) -> String? {
        guard let userAgent, !userAgent.isEmpty else { return nil }
        let lowered = userAgent.lowercased()
        if ["iphone", "ipad", "ios", "cfnetwork", "darwin"].contains(where: lowered.contains) { return "ios" }
        if ["android", "okhttp", "dalvik"].contains(where: lowered.contains) { return "android" }
        if lowered.contains("mozilla") { return "web" }
        return "other"
    }
}
