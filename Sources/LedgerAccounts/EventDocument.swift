import Foundation
import LedgerCore
import LedgerEventStore
import LedgerIdentity

/// The public JSON form of a recorded event, as the event API, its stream and webhooks send it
/// (API.md "Events and audit"):
///
/// `{cursor, event_id, account_id, stream_id, type, schema_version, version, recorded_at, data, metadata, redacted}`
///
/// - `account_id` is the account the event is about: the data-key subject (an OTP request's
///   stream belongs to its account), else the stream itself.
/// - `data` is the decrypted payload without secrets' hashes (`AccountService.isRedactedInExport`);
///   after a purge it is `null` and `redacted` is true.
/// - A payload that is not a JSON object (written by a non-identity stream) is sent as
///   `data_base64` instead, so the document is always valid JSON.
public enum EventDocument {
    /// The event as compact JSON bytes.
    public static func json(_ event: RecordedEvent) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(320 + (event.payload?.count ?? 0) + event.metadataJSON.utf8.count)
        append(event, to: &output)
        return output
    }

    /// Appends the event's JSON to `output`.
    public static func append(_ event: RecordedEvent, to output: inout [UInt8]) {
        output.append(contentsOf: Literal.cursor)
        event.cursor.appendToken(to: &output)
        output.append(contentsOf: Literal.eventID)
        event.eventID.appendLowercased(to: &output)
        output.append(contentsOf: Literal.accountID)
        (event.subjectID ?? event.streamID).appendLowercased(to: &output)
        output.append(contentsOf: Literal.streamID)
        event.streamID.appendLowercased(to: &output)
        output.append(contentsOf: Literal.type)
        JSONObjectFilter.appendString(event.type, to: &output)
        output.append(contentsOf: Literal.schemaVersion)
        output.appendDecimal(Int64(event.schemaVersion))
        output.append(contentsOf: Literal.version)
        output.appendDecimal(event.streamVersion)
        output.append(contentsOf: Literal.recordedAt)
        RFC3339.append(event.recordedAt, to: &output)
        output.append(contentsOf: Literal.data)
        if let payload = event.payload {
            if !JSONObjectFilter.append(payload, to: &output, dropping: AccountService.isRedactedInExport(utf8:)) {
                output.append(contentsOf: Literal.null)
                output.append(contentsOf: Literal.dataBase64)
                JSONObjectFilter.appendString(Data(payload).base64EncodedString(), to: &output)
            }
        } else {
            output.append(contentsOf: Literal.null)
        }
        output.append(contentsOf: Literal.metadata)
        var metadata = event.metadataJSON
        metadata.withUTF8 { output.append(contentsOf: $0) }
        output.append(contentsOf: event.isRedacted ? Literal.redactedTrue : Literal.redactedFalse)
    }

    /// The fixed parts of a document, as bytes: copying them is a `memcpy`, where appending a
    /// `String`'s UTF-8 view went through the string machinery a dozen times an event.
    private enum Literal {
        static let cursor = Array(#"{"cursor":""#.utf8)
        static let eventID = Array(#"","event_id":""#.utf8)
        static let accountID = Array(#"","account_id":""#.utf8)
        static let streamID = Array(#"","stream_id":""#.utf8)
        static let type = Array(#"","type":"#.utf8)
        static let schemaVersion = Array(#","schema_version":"#.utf8)
        static let version = Array(#","version":"#.utf8)
        static let recordedAt = Array(#","recorded_at":""#.utf8)
        static let data = Array(#"","data":"#.utf8)
        static let null = Array("null".utf8)
        static let dataBase64 = Array(#","data_base64":"#.utf8)
        static let metadata = Array(#","metadata":"#.utf8)
        static let redactedTrue = Array(#","redacted":true}"#.utf8)
        static let redactedFalse = Array(#","redacted":false}"#.utf8)
    }

    /// A JSON array of the events, for list answers.
    public static func jsonArray(_ events: [RecordedEvent]) -> [UInt8] {
        var output: [UInt8] = [UInt8(ascii: "[")]
        output.reserveCapacity(events.count * 512)
        for (index, event) in events.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            append(event, to: &output)
        }
        output.append(UInt8(ascii: "]"))
        return output
    }
}
