import Foundation
import HTTPTypes
import Hummingbird
import LedgerCore
import LedgerCrypto
import LedgerEventStore

/// Sets what every event a request causes records besides its payload (DESIGN.md: actor,
/// correlation, IP hash, user-agent class; never personal data): the request id as the
/// correlation id, a keyed hash of the client address, and a coarse class of the user agent.
/// The actor is named nearer the work: the account for its own commands, the API key for a
/// service's calls.
///
/// Runs inside `RequestIDMiddleware` and `ClientAddressMiddleware`, whose id and address it records.
public struct EventMetadataMiddleware: RouterMiddleware {
    public typealias Context = LedgerRequestContext

    /// Keys the client-address hash, so the stored hash cannot be reversed by trying every
    /// address; derived from the master key.
    let ipHashKey: [UInt8]

    public init(ipHashKey: [UInt8]) {
        self.ipHashKey = ipHashKey
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let metadata = EventMetadata(
            correlationID: context.requestID.isEmpty ? nil : context.requestID,
            ipHash: context.clientAddress.map { Self.ipHash($0, key: ipHashKey) },
            userAgentClass: Self.userAgentClass(request.headers[.userAgent]))
        return try await EventMetadata.$current.withValue(metadata) { try await next(request, context) }
    }

    /// HMAC-SHA256 of the address's bytes, 128 bits in hex: the same client gives the same
    /// hash, so an auditor can tell one client from many without learning the address.
    static func ipHash(_ address: String, key: [UInt8]) -> String {
        Hex.encode(Array(HMACSHA256.authenticate(key: key, message: IPAddress.bytes(address) ?? Array(address.utf8)).prefix(16)))
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
