import Foundation
import LedgerCore
import LedgerEvents
import LedgerIdentity

/// The public JSON form of a recorded event, as the event API, its stream and webhooks send it
/// (docs/architecture.md "Events and audit"; docs/events.md):
///
/// `{cursor, event_id, account_id, stream_id, type, schema_version, version, recorded_at, data, metadata, redacted}`
///
/// - `account_id` is the account the event is about: the data-key subject (an OTP request's
///   stream belongs to its account), else the stream itself.
/// - `data` is the decrypted payload without secrets' hashes (`AccountService.isRedactedInExport`),
///   its ids (`…_id`, `…_ids`) in lower case like the envelope's (`UUIDText`); after a purge it
///   is `null` and `redacted` is true.
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

    /// Appends the event's JSON to `output`; `forAuditors` keeps the desk's notes in a support
    /// call's record (`AccountService.isRedactedFromStaffRecord`).
    public static func append(_ event: RecordedEvent, to output: inout [UInt8], forAuditors: Bool = false) {
        output.append(literal: Literal.cursor)
        event.cursor.appendToken(to: &output)
        output.append(literal: Literal.eventID)
        event.eventID.appendLowercased(to: &output)
        output.append(literal: Literal.accountID)
        (event.subjectID ?? event.streamID).appendLowercased(to: &output)
        output.append(literal: Literal.streamID)
        event.streamID.appendLowercased(to: &output)
        output.append(literal: Literal.type)
        output.appendJSONString(event.type)
        output.append(literal: Literal.schemaVersion)
        output.appendDecimal(Int64(event.schemaVersion))
        output.append(literal: Literal.version)
        output.appendDecimal(event.streamVersion)
        output.append(literal: Literal.recordedAt)
        RFC3339.append(event.recordedAt, to: &output)
        output.append(literal: Literal.data)
        if !appendData(event, to: &output, forAuditors: forAuditors) {
            output.append(literal: Literal.null)
            output.append(literal: Literal.dataBase64)
            output.appendJSONString(Data(event.payload ?? []).base64EncodedString())
        }
        output.append(literal: Literal.metadata)
        var metadata = event.metadataJSON
        metadata.withUTF8 { output.append(contentsOf: $0) }
        output.append(literal: event.isRedacted ? Literal.redactedTrue : Literal.redactedFalse)
    }

    /// Appends the event's data as a JSON value: the payload without secrets' hashes, ids in
    /// lower case, or `null` once purged. False, with nothing appended, for a payload that is
    /// not a JSON object (sent base64 instead).
    static func appendData(_ event: RecordedEvent, to output: inout [UInt8], forAuditors: Bool = false) -> Bool {
        guard let payload = event.payload else {
            output.append(literal: Literal.null)
            return true
        }
        let dropping =
            !forAuditors && AccountService.carriesStaffNotes(event.type)
            ? AccountService.isRedactedFromStaffRecord(utf8:) : AccountService.isRedactedInExport(utf8:)
        return JSONObjectFilter.append(payload, to: &output, lowercasingIDs: true, dropping: dropping)
    }

    /// The fixed parts of a document, as literals: copying them is a `memcpy`, where appending a
    /// `String`'s UTF-8 view went through the string machinery a dozen times an event.
    private enum Literal {
        static var cursor: StaticString { #"{"cursor":""# }
        static var eventID: StaticString { #"","event_id":""# }
        static var accountID: StaticString { #"","account_id":""# }
        static var streamID: StaticString { #"","stream_id":""# }
        static var type: StaticString { #"","type":"# }
        static var schemaVersion: StaticString { #","schema_version":"# }
        static var version: StaticString { #","version":"# }
        static var recordedAt: StaticString { #","recorded_at":""# }
        static var data: StaticString { #"","data":"# }
        static var null: StaticString { "null" }
        static var dataBase64: StaticString { #","data_base64":"# }
        static var metadata: StaticString { #","metadata":"# }
        static var redactedTrue: StaticString { #","redacted":true}"# }
        static var redactedFalse: StaticString { #","redacted":false}"# }
    }

    /// A JSON array of the events, for list answers.
    public static func jsonArray(_ events: [RecordedEvent]) -> [UInt8] {
        EventForm.plain.jsonArray(events)
    }

    /// The events as auditors read them (`GET /accounts/{id}/events`): the desk's notes kept.
    public static func auditJSONArray(_ events: [RecordedEvent]) -> [UInt8] {
        var output: [UInt8] = [UInt8(ascii: "[")]
        for (index, event) in events.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            append(event, to: &output, forAuditors: true)
        }
        output.append(UInt8(ascii: "]"))
        return output
    }

    /// Appends the events as comma-separated array elements, with a leading comma when
    /// `continuing` an array that already has elements.
    public static func appendElements(_ events: [RecordedEvent], to output: inout [UInt8], continuing: Bool) {
        EventForm.plain.appendElements(events, to: &output, continuing: continuing)
    }
}
