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
        func field(_ name: String) {
            output.append(contentsOf: ",\"".utf8)
            output.append(contentsOf: name.utf8)
            output.append(contentsOf: "\":".utf8)
        }
        func string(_ name: String, _ value: String) {
            field(name)
            JSONObjectFilter.appendString(value, to: &output)
        }
        func uuid(_ name: String, _ value: UUID) {
            field(name)
            output.append(UInt8(ascii: "\""))
            value.appendLowercased(to: &output)
            output.append(UInt8(ascii: "\""))
        }
        output.append(contentsOf: #"{"cursor":""#.utf8)
        event.cursor.appendToken(to: &output)
        output.append(UInt8(ascii: "\""))
        uuid("event_id", event.eventID)
        uuid("account_id", event.subjectID ?? event.streamID)
        uuid("stream_id", event.streamID)
        string("type", event.type)
        field("schema_version")
        output.appendDecimal(Int64(event.schemaVersion))
        field("version")
        output.appendDecimal(event.streamVersion)
        field("recorded_at")
        output.append(UInt8(ascii: "\""))
        RFC3339.append(event.recordedAt, to: &output)
        output.append(UInt8(ascii: "\""))
        field("data")
        if let payload = event.payload {
            if !JSONObjectFilter.append(payload, to: &output, dropping: AccountService.isRedactedInExport(utf8:)) {
                output.append(contentsOf: "null".utf8)
                string("data_base64", Data(payload).base64EncodedString())
            }
        } else {
            output.append(contentsOf: "null".utf8)
        }
        field("metadata")
        output.append(contentsOf: event.metadataJSON.utf8)
        field("redacted")
        output.append(contentsOf: (event.isRedacted ? "true" : "false").utf8)
        output.append(UInt8(ascii: "}"))
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
