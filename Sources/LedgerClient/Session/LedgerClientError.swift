import OpenAPIRuntime

/// A failure of the hand-written client (`LedgerSession` and its storage); the service's own
/// answers come back as the generated client's typed outputs.
public struct LedgerClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// No session: never signed in, signed out, or the session ended (a refresh was refused).
        public static let signedOut = Code("signed_out")
        /// The refresh failed for a reason that may pass (network, `503`); the session is kept.
        public static let refreshFailed = Code("refresh_failed")
        /// The service answered something this client does not expect.
        public static let unexpectedResponse = Code("unexpected_response")
        /// The token storage failed.
        public static let storage = Code("storage")
        /// The call did not reach the service or its answer could not be read (network, TLS,
        /// decoding); `message` names the kind of failure only.
        public static let transport = Code("transport")
        /// The service's URL is plain http to another host: nothing is sent.
        public static let insecureServer = Code("insecure_server")
    }

    /// The type of `error` (and of the error under it, for the generated client's), never its
    /// text: the generated client's errors quote the request, passwords and tokens included.
    static func kind(of error: any Error) -> String {
        if let clientError = error as? ClientError { return "\(type(of: clientError.underlyingError))" }
        return "\(type(of: error))"
    }

    /// Runs one call of the generated client; its failure becomes a `LedgerClientError` that
    /// names `call` and the kind of failure only.
    static func guarding<T>(_ call: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as LedgerClientError {
            throw error
        } catch {
            throw LedgerClientError(.transport, "The \(call) failed (\(kind(of: error))).")
        }
    }

    /// The kind of failure.
    public let code: Code
    /// What happened, for logs.
    public let message: String

    /// A failure of `code`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
