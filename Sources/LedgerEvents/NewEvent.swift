import Foundation
import LedgerCore

/// An event to append. `payload` is the plaintext (usually JSON); the store seals it.
public struct NewEvent: Sendable, Hashable {
    /// Chosen by the writer; retrying an append with the same ids is a no-op. The default is
    /// time-ordered (version 7), which keeps the store's unique index on event ids growing
    /// at its right edge.
    public var eventID: UUID
    /// Lower snake case, dot-separated, past tense: `account.registered`.
    public var type: String
    public var schemaVersion: Int
    public var payload: [UInt8]
    public var metadata: EventMetadata

    public init(
        eventID: UUID = .timeOrdered(), type: String, schemaVersion: Int = 1, payload: [UInt8], metadata: EventMetadata = EventMetadata()
    ) {
        self.eventID = eventID
        self.type = type
        self.schemaVersion = schemaVersion
        self.payload = payload
        self.metadata = metadata
    }

    /// True for names like `account.registered` or `phone.otp_issued`.
    public static func isValidType(_ type: String) -> Bool {
        var segments = 0
        var segmentStart = true
        for byte in type.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"):
                if segmentStart { segments += 1 }
                segmentStart = false
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                if segmentStart { return false }
            case UInt8(ascii: "."):
                if segmentStart { return false }
                segmentStart = true
            default:
                return false
            }
        }
        return segments >= 2 && !segmentStart
    }
}
