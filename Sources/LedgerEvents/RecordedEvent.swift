import Foundation

/// An event as stored, with its payload opened when its subject's key still exists.
public struct RecordedEvent: Sendable, Hashable {
    public let cursor: FeedCursor
    public var globalPosition: Int64 { cursor.position }
    public let eventID: UUID
    public let streamID: UUID
    public let streamVersion: Int64
    public let type: String
    public let schemaVersion: Int
    public let subjectID: UUID?
    /// The plaintext payload; nil when the subject's key was destroyed (`isRedacted`).
    public let payload: [UInt8]?
    /// The stored metadata JSON.
    public let metadataJSON: String
    public let recordedAt: Date

    public init(
        cursor: FeedCursor, eventID: UUID, streamID: UUID, streamVersion: Int64, type: String, schemaVersion: Int, subjectID: UUID?,
        payload: [UInt8]?, metadataJSON: String, recordedAt: Date
    ) {
        self.cursor = cursor
        self.eventID = eventID
        self.streamID = streamID
        self.streamVersion = streamVersion
        self.type = type
        self.schemaVersion = schemaVersion
        self.subjectID = subjectID
        self.payload = payload
        self.metadataJSON = metadataJSON
        self.recordedAt = recordedAt
    }

    /// True when the payload was crypto-shredded.
    public var isRedacted: Bool { payload == nil }

    public var metadata: EventMetadata { EventMetadata(json: metadataJSON) }
}

/// One page of the global feed.
public struct FeedPage: Sendable {
    public let events: [RecordedEvent]
    /// Where the next read continues; equal to the request's cursor when nothing was new.
    public let nextCursor: FeedCursor

    package init(events: [RecordedEvent], nextCursor: FeedCursor) {
        self.events = events
        self.nextCursor = nextCursor
    }
}
