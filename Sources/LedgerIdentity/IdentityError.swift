/// A command the account's state refuses, with the API's code and the seeds' copy.
public struct IdentityError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let accountExists = Code("account_exists")
        public static let noAccount = Code("no_account")
        public static let invalidCredentials = Code("invalid_credentials")
        public static let sessionExpired = Code("session_expired")
        public static let linkExpired = Code("link_expired")
        public static let notFound = Code("not_found")
        public static let rateLimited = Code("rate_limited")
    }

    public let code: Code
    public let message: String
    /// For `rateLimited`: seconds until the next try is allowed.
    public let retryAfter: Int?

    public init(_ code: Code, _ message: String, retryAfter: Int? = nil) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String { "\(code): \(message)" }

    public static let sessionExpired = IdentityError(.sessionExpired, "Your session has expired. Sign in again.")
    public static let linkExpired = IdentityError(.linkExpired, "This link has expired")
    public static let invalidCredentials = IdentityError(.invalidCredentials, "Incorrect email or password.")
}
