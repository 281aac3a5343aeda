import HTTPTypes
import Hummingbird
import LedgerAccounts
import Logging

/// The per-request context: Hummingbird's core storage plus the request id every log line
/// and response carries.
public struct LedgerRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// From `X-Request-Id` when the caller sent a sane one, generated otherwise.
    public var requestID: String = ""

    /// The socket's peer address (nil in router tests).
    public let remoteAddress: String?
    /// Who the client is, for the per-address limits and event metadata: set once by
    /// `ClientAddressMiddleware` (the peer, or behind a trusted proxy its `X-Forwarded-For` hop).
    public var clientAddress: String?
    /// The signed-in session, on routes guarded by `SessionMiddleware`.
    public var session: SessionRef?

    /// The client as the per-client limits count it (`ClientAddress.limitKey`: an IPv6 client
    /// by its /64).
    public var client: String? { clientAddress.map(ClientAddress.limitKey) }

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress?.ipAddress
    }

    /// openapi.yaml: bodies over 64 KiB are refused with `413 payload_too_large`.
    public var maxUploadSize: Int { APILimits.maximumBodyBytes }
}

/// Limits of the HTTP contract.
public enum APILimits {
    public static let maximumBodyBytes = 64 * 1024
}
