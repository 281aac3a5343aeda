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
