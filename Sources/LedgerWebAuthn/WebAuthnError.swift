/// Every refusal of a credential, by the check that refused it. The HTTP layer answers them all
/// alike (`invalid_credential`); the code says which check failed, for logs and for the counter
/// rule, which the caller turns into a suspect event.
public struct WebAuthnError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Base: String, Sendable {
            case malformed
            case type
            case challenge
            case origin
            case rpIDHash = "rp_id_hash"
            case userPresence = "user_presence"
            case userVerification = "user_verification"
            case signature
            case unsupportedAlgorithm = "unsupported_algorithm"
            case attestation
            case counter
            case credential
        }

        let base: Base
        private init(_ base: Base) { self.base = base }

        /// Bytes that do not parse: CBOR, JSON, base64url, authenticator data, a COSE key's form.
        public static let malformed = Code(.malformed)
        /// The credential's `type` is not "public-key", or the client data's type is not the ceremony's.
        public static let type = Code(.type)
        /// The client data's challenge is not the one the service issued.
        public static let challenge = Code(.challenge)
        /// The client data's origin is not an allowed one, or the call came from a cross-origin frame.
        public static let origin = Code(.origin)
        /// The authenticator data is scoped to another relying party.
        public static let rpIDHash = Code(.rpIDHash)
        /// The authenticator did not test the user's presence (UP clear).
        public static let userPresence = Code(.userPresence)
        /// User verification was required and the authenticator did not perform it (UV clear).
        public static let userVerification = Code(.userVerification)
        /// The assertion's signature does not verify with the stored key.
        public static let signature = Code(.signature)
        /// The credential key's type, curve, algorithm or size is not one the service accepts.
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// The attestation statement is of a format the service does not accept, or does not verify.
        public static let attestation = Code(.attestation)
        /// A non-zero signature counter that did not grow: the authenticator may have been cloned.
        public static let counter = Code(.counter)
        /// The credential id is missing, inconsistent (`id`, `rawId`, authenticator data) or the stored key is unusable.
        public static let credential = Code(.credential)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// A human explanation; never contains key material, signatures or challenges.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "WebAuthnError(\(code)): \(message)" }
}
