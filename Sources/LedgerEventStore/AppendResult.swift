import Foundation

/// Where an append put its events.
public struct AppendResult: Sendable, Hashable {
    public let streamID: UUID
    public let firstVersion: Int64
    /// The stream's version after the append.
    public let lastVersion: Int64
    public let firstPosition: Int64
    public let lastPosition: Int64
    /// True when the events were already stored by an earlier try with the same event ids.
    public let replayed: Bool
}
