import COpenSSL

/// A failure in a cryptographic operation, with OpenSSL's reason where it gave one.
public struct CryptoError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Base: String, Sendable {
            case randomUnavailable = "random_unavailable"
            case invalidKey = "invalid_key"
            case authenticationFailed = "authentication_failed"
            case wrongMasterKey = "wrong_master_key"
            case malformedCiphertext = "malformed_ciphertext"
            case keyDestroyed = "key_destroyed"
            case openSSLFailure = "openssl_failure"
        }

        let base: Base
        private init(_ base: Base) { self.base = base }

        /// The system's random generator failed.
        public static let randomUnavailable = Code(.randomUnavailable)
        /// A key of the wrong length or form.
        public static let invalidKey = Code(.invalidKey)
        /// A ciphertext or its tag did not authenticate: tampered, or the wrong key.
        public static let authenticationFailed = Code(.authenticationFailed)
        /// A wrapped key was made under another master key than the configured one.
        public static let wrongMasterKey = Code(.wrongMasterKey)
        /// The bytes are not a ciphertext this code wrote.
        public static let malformedCiphertext = Code(.malformedCiphertext)
        /// The subject's data key was destroyed (crypto-shredded).
        public static let keyDestroyed = Code(.keyDestroyed)
        /// An OpenSSL call failed unexpectedly.
        public static let openSSLFailure = Code(.openSSLFailure)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// A human explanation; never contains key material or plaintext.
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "CryptoError(\(code)): \(reason)" }

    /// An OpenSSL failure, with the library's last error string (which names no secret).
    static func openSSL(_ operation: String) -> CryptoError {
        let errorCode = ERR_get_error()
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(errorCode, &buffer, buffer.count)
        let detail = errorCode == 0 ? "no detail" : String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return CryptoError(.openSSLFailure, "\(operation) failed: \(detail)")
    }
}
