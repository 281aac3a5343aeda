import Foundation
import LedgerAccounts
import LedgerCore
import LedgerIdentity
import LedgerPostgres

/// Writes the `otp_requests` rows of code requests from their events: one request's new
/// events after a command, or whole streams in a rebuild, the same way (see `AccountProjector`).
struct OTPProjector {
    struct RequestRow: RecordsetRow {
        let request_id: UUID, account_id: UUID, session_id: UUID?, purpose: String, phone_e164: String
        let client_address: String?, client_network: String?, region: String, created_at: Date, expires_at: Date
        var closed_at: Date?
        var failed_attempts: Int64 = 0

        func write(to row: inout BinaryRecordset) {
            row.field("request_id", request_id)
            row.field("account_id", account_id)
            row.field("session_id", session_id)
            row.field("purpose", purpose)
            row.field("phone_e164", phone_e164)
            row.field("client_address", client_address)
            row.field("client_network", client_network)
            row.field("region", region)
            row.field("created_at", created_at)
            row.field("expires_at", expires_at)
            row.field("closed_at", closed_at)
            row.field("failed_attempts", failed_attempts)
        }
    }

    private var rows: [RequestRow] = []
    private var rowIndex: [UUID: Int] = [:]
    /// Closings of requests stored by earlier writes, in event order.
    private var earlierClosings: [(UUID, Date)] = []
    /// Wrong codes for requests stored by earlier writes.
    private var earlierFailures: [UUID: Int64] = [:]

    /// A command's events, all recorded at `time`.
    static func project(
        _ requestID: UUID, events: [OTPEvent], at time: Date, clientAddress: String?, on connection: PostgresConnection
    ) async throws {
        var projector = OTPProjector()
        projector.add(requestID, events: events.map { ($0, time) }, clientAddress: clientAddress)
        try await projector.write(on: connection, into: .live)
    }

    /// Works out the row of one request from its events; the first closing event closes it.
    mutating func add(_ requestID: UUID, events: [(OTPEvent, Date)], clientAddress: String?) {
        for (event, time) in events {
            switch event {
            case .issued(let issued):
                guard rowIndex[requestID] == nil else { continue }
                rowIndex[requestID] = rows.count
                rows.append(
                    RequestRow(
                        request_id: requestID, account_id: issued.accountID, session_id: issued.sessionID,
                        purpose: issued.purpose.rawValue, phone_e164: issued.phone, client_address: clientAddress,
                        client_network: clientAddress.flatMap(IPAddress.networkLimitKey), region: issued.region, created_at: time,
                        expires_at: issued.expiresAt))
            case .verified, .invalidated, .cancelled:
                if let index = rowIndex[requestID] {
                    if rows[index].closed_at == nil { rows[index].closed_at = time }
                } else {
                    earlierClosings.append((requestID, time))
                }
            case .failed:
                if let index = rowIndex[requestID] {
                    rows[index].failed_attempts += 1
                } else {
                    earlierFailures[requestID, default: 0] += 1
                }
            }
        }
    }

    /// Leaves out the requests made before `cutoff` (a rebuild's `AccountProjections.Expiry`).
    mutating func leaveOut(madeBefore cutoff: Date) {
        rows.removeAll { $0.created_at < cutoff }
        rowIndex = Dictionary(uniqueKeysWithValues: rows.enumerated().map { ($1.request_id, $0) })
    }

    /// Stores the rows. On the live tables, the events may close requests stored by earlier
    /// writes; a rebuild holds each request's whole stream.
    func write(on connection: PostgresConnection, into target: ProjectionTarget) async throws {
        if target == .live {
            for (requestID, time) in earlierClosings {
                try await target.write(
                    "UPDATE otp_requests SET closed_at = $2 WHERE request_id = $1 AND closed_at IS NULL",
                    [.uuid(requestID), .timestamp(time)], on: connection)
            }
            for (requestID, failures) in earlierFailures {
                try await target.write(
                    "UPDATE otp_requests SET failed_attempts = failed_attempts + $2 WHERE request_id = $1",
                    [.uuid(requestID), .int(failures)], on: connection)
            }
        }
        guard !rows.isEmpty else { return }
        let recordset = BinaryRecordset(rows)
        try await target.write(
            """
            INSERT INTO otp_requests (request_id, account_id, session_id, purpose, phone_e164, client_address,
                                      client_network, region, created_at, expires_at, closed_at, failed_attempts)
            SELECT r.request_id, r.account_id, r.session_id, r.purpose, r.phone_e164, r.client_address,
                   r.client_network, r.region, r.created_at, r.expires_at, r.closed_at, r.failed_attempts
            FROM \(recordset.source)
            \(target == .live ? "ON CONFLICT (request_id) DO NOTHING" : "")
            """,
            recordset.parameters, on: connection)
    }
}
