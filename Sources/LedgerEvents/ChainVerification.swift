import Foundation

/// The outcome of checking one stream's hash chain.
public struct ChainVerification: Sendable, Hashable {
    public let streamID: UUID
    public let ok: Bool
    /// Events checked.
    public let events: Int
    /// The first stream position that does not verify (altered, missing or out of place).
    public let firstBadVersion: Int64?
    /// Why it failed, naming no payload content.
    public let reason: String?

    public init(streamID: UUID, ok: Bool, events: Int, firstBadVersion: Int64?, reason: String?) {
        self.streamID = streamID
        self.ok = ok
        self.events = events
        self.firstBadVersion = firstBadVersion
        self.reason = reason
    }
}
