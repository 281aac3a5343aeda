import Foundation
import LedgerCore

/// The outcome of checking a checkpoint document against a public key and the database.
public struct CheckpointVerification: Sendable, Hashable {
    /// Where the first problem is.
    public enum Location: Sendable, Hashable, CustomStringConvertible {
        /// The document itself: it does not parse, was signed by another key, or was edited.
        case document
        /// A stream's chain up to the checkpointed head: the first version that does not verify.
        case stream(UUID, version: Int64)
        /// The commit-ordered feed up to the checkpoint's cursor (events removed, added or moved).
        case feed

        public var description: String {
            switch self {
            case .document: return "checkpoint document"
            case .stream(let streamID, let version): return "stream \(streamID.lowercased) at version \(version)"
            case .feed: return "feed"
            }
        }
    }

    /// The first problem found; its reason never quotes payload content.
    public struct Failure: Sendable, Hashable, CustomStringConvertible {
        public let location: Location
        public let reason: String

        public var description: String { "\(location): \(reason)" }
    }

    /// Nil when the document could not be read.
    public let checkpoint: Checkpoint?
    /// Streams whose chains verified up to their checkpointed heads.
    public let streamsVerified: Int
    public let failure: Failure?

    /// The signature holds for the given key and the database still holds exactly the signed history.
    public var ok: Bool { failure == nil }

    init(checkpoint: Checkpoint?, streamsVerified: Int, failure: Failure?) {
        self.checkpoint = checkpoint
        self.streamsVerified = streamsVerified
        self.failure = failure
    }
}
