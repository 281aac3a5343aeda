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
        func field(_ name: String, first: Bool = false) {
            if !first { output.append(UInt8(ascii: ",")) }
            output.append(UInt8(ascii: "\""))
            output.append(contentsOf: name.utf8)
            output.append(contentsOf: "\":".utf8)
        }
        func string(_ name: String, _ value: String, first: Bool = false) {
            field(name, first: first)
            JSONObjectFilter.appendString(value, to: &output)
        }
        output.append(UInt8(ascii: "{"))
        string("cursor", event.cursor.token, first: true)
        string("event_id", event.eventID.lowercased)
        string("account_id", (event.subjectID ?? event.streamID).lowercased)
        string("stream_id", event.streamID.lowercased)
        string("type", event.type)
        field("schema_version")
        output.append(contentsOf: String(event.schemaVersion).utf8)
        field("version")
        output.append(contentsOf: String(event.streamVersion).utf8)
        string("recorded_at", RFC3339.format(event.recordedAt))
        field("data")
        if let payload = event.payload {
            if let data = JSONObjectFilter.filtered(payload, dropping: isSecretField) {
                output.append(contentsOf: data)
            } else {
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

    static func isSecretField(_ name: Substring) -> Bool {
        AccountService.isRedactedInExport(String(name))
    }
}
