import Foundation
import LedgerCore

/// An event to append. `payload` is the plaintext (usually JSON); the store seals it.
public struct NewEvent: Sendable, Hashable {
    /// Chosen by the writer; retrying an append with the same ids is a no-op.
    public var eventID: UUID
    /// Lower snake case, dot-separated, past tense: `account.registered`.
    public var type: String
    public var schemaVersion: Int
    public var payload: [UInt8]
    public var metadata: EventMetadata

    public init(eventID: UUID = .random(), type: String, schemaVersion: Int = 1, payload: [UInt8], metadata: EventMetadata = EventMetadata()) {
        self.eventID = eventID
        self.type = type
        self.schemaVersion = schemaVersion
        self.payload = payload
        self.metadata = metadata
    }

    /// True for names like `account.registered` or `phone.otp_issued`.
    public static func isValidType(_ type: String) -> Bool {
        let segments = type.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count >= 2 else { return false }
        return segments.allSatisfy { segment in
            guard let first = segment.utf8.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else { return false }
            return segment.utf8.allSatisfy {
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || $0 == UInt8(ascii: "_")
            }
        }
    }
}
