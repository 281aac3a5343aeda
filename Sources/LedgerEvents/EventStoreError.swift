/// A failure of an event-store operation that callers handle by kind.
public struct EventStoreError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Base: String, Sendable {
            case wrongExpectedVersion = "wrong_expected_version"
            case idempotencyConflict = "idempotency_conflict"
            case subjectKeyDestroyed = "subject_key_destroyed"
            case invalidEvent = "invalid_event"
            case invalidCursor = "invalid_cursor"
            case undecryptable = "undecryptable"
            case malformedCheckpoint = "malformed_checkpoint"
        }

        let base: Base
        private init(_ base: Base) { self.base = base }

        /// The stream is not at the version the append expected.
        public static let wrongExpectedVersion = Code(.wrongExpectedVersion)
        /// An event id was used before for different content.
        public static let idempotencyConflict = Code(.idempotencyConflict)
        /// The subject's data key is destroyed: the subject was purged.
        public static let subjectKeyDestroyed = Code(.subjectKeyDestroyed)
        /// The event breaks a rule of the store (type name, empty batch).
        public static let invalidEvent = Code(.invalidEvent)
        /// A cursor that this store did not write.
        public static let invalidCursor = Code(.invalidCursor)
        /// A payload could not be decrypted (wrong master key, tampered ciphertext).
        public static let undecryptable = Code(.undecryptable)
        /// A checkpoint document that does not parse, or has a field of the wrong form.
        public static let malformedCheckpoint = Code(.malformedCheckpoint)

        public var description: String { base.rawValue }
    }

    public let code: Code
    public let message: String
    /// For `wrongExpectedVersion`: the stream's version when the append ran (0: no stream).
    public let actualVersion: Int64?

    public init(_ code: Code, _ message: String, actualVersion: Int64? = nil) {
        self.code = code
        self.message = message
        self.actualVersion = actualVersion
    }

    public var description: String { "EventStoreError(\(code)): \(message)" }
}
