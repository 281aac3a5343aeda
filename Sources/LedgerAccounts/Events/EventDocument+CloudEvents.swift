import Foundation
import LedgerCore
import LedgerEvents
import LedgerIdentity

/// The CloudEvents 1.0 structured JSON form of a recorded event (docs/event-consumers.md,
/// the `Accept` forms of `GET /events` in openapi.yaml), for consumers that route or store events with the
/// CloudEvents SDKs:
///
/// `{specversion, id, source, type, subject, time, datacontenttype, data, ledgercursor, ledgerversion, ledgerschemaversion}`
///
/// `id` is the `event_id`, `type` the event type under `fit321.ledger.`, `subject` the account,
/// `time` the `recorded_at`, `data` the same as the plain form's (`null` once purged), and
/// `ledgercursor` the plain form's `cursor`: a consumer resumes from a CloudEvent alone.
extension EventDocument {
    /// The `source` of every event unless `LEDGER_EVENT_SOURCE` says otherwise.
    public static let defaultCloudEventSource = "urn:321fit:account-ledger"
    /// What every event type is prefixed with in `type`.
    public static let cloudEventTypePrefix = "fit321.ledger."

    /// Appends the event as one structured CloudEvent from `source`.
    public static func appendCloudEvent(_ event: RecordedEvent, source: String, to output: inout [UInt8]) {
        output.append(literal: #"{"specversion":"1.0","id":""#)
        event.eventID.appendLowercased(to: &output)
        output.append(literal: #"","source":"#)
        output.appendJSONString(source)
        output.append(literal: #","type":"#)
        output.appendJSONString(cloudEventTypePrefix + event.type)
        output.append(literal: #","subject":""#)
        (event.subjectID ?? event.streamID).appendLowercased(to: &output)
        output.append(literal: #"","time":""#)
        RFC3339.append(event.recordedAt, to: &output)
        output.append(literal: #"","datacontenttype":"application/json","#)
        // CloudEvents carries a payload that is no JSON object as `data_base64`, never both.
        var data: [UInt8] = Array(#""data":"#.utf8)
        if appendData(event, to: &data) {
            output.append(contentsOf: data)
        } else {
            output.append(literal: #""data_base64":"#)
            output.appendJSONString(Data(event.payload ?? []).base64EncodedString())
        }
        output.append(literal: #","ledgercursor":""#)
        event.cursor.appendToken(to: &output)
        output.append(literal: #"","ledgerversion":"#)
        output.appendDecimal(event.streamVersion)
        output.append(literal: #","ledgerschemaversion":"#)
        output.appendDecimal(Int64(event.schemaVersion))
        output.append(UInt8(ascii: "}"))
    }
}

/// How events are written for a consumer: the service's own JSON, or CloudEvents (chosen by
/// `Accept`, or a subscription's `format`).
public enum EventForm: Sendable, Equatable {
    case plain
    case cloudEvents(source: String)

    /// Appends one event.
    public func append(_ event: RecordedEvent, to output: inout [UInt8]) {
        switch self {
        case .plain: EventDocument.append(event, to: &output)
        case .cloudEvents(let source): EventDocument.appendCloudEvent(event, source: source, to: &output)
        }
    }

    /// Appends the events as comma-separated array elements, with a leading comma when
    /// `continuing` an array that already has elements.
    public func appendElements(_ events: [RecordedEvent], to output: inout [UInt8], continuing: Bool) {
        for (index, event) in events.enumerated() {
            if continuing || index > 0 { output.append(UInt8(ascii: ",")) }
            append(event, to: &output)
        }
    }

    /// A JSON array of the events (a CloudEvents batch in that form).
    public func jsonArray(_ events: [RecordedEvent]) -> [UInt8] {
        var output: [UInt8] = [UInt8(ascii: "[")]
        output.reserveCapacity(events.count * 560)
        appendElements(events, to: &output, continuing: false)
        output.append(UInt8(ascii: "]"))
        return output
    }
}
