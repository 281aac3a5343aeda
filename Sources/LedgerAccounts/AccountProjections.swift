import Foundation
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres

/// Throws the account projections away and rebuilds them from the account streams, giving
/// exactly the rows the incremental path wrote (DESIGN §3).
public enum AccountProjections {
    /// The tables rebuilt; operational tables (outbox, throttles, API keys) are not projections.
    static let tables = ["accounts", "sessions", "spent_refresh_tokens", "email_links", "otp_requests", "signup_cooldowns"]

    /// How far a rebuild is: streams replayed of all, and events read so far.
    public struct Progress: Sendable {
        public var streamsDone = 0
        public var streamsTotal = 0
        public var events = 0
        public init() {}
    }

    /// Rebuilds every account and OTP request in one transaction; returns how many accounts
    /// were replayed. `progress` is told after every stream.
    @discardableResult
    public static func rebuild(store: EventStore, progress: (@Sendable (Progress) -> Void)? = nil) async throws -> Int {
        try await store.client.transaction { connection in
            try await connection.query("TRUNCATE " + tables.joined(separator: ", "))
            let streams = try await connection.query(
                "SELECT stream_id FROM streams WHERE stream_type = $1 ORDER BY stream_id", [.text(PostgresAccountRepository.streamType)])
            let requests = try await connection.query(
                "SELECT stream_id FROM streams WHERE stream_type = $1 ORDER BY stream_id", [.text(PostgresOTPRepository.streamType)])
            var status = Progress()
            status.streamsTotal = streams.rowCount + requests.rowCount
            var replayed = 0
            for row in streams.rows {
                guard let accountID = try row.uuid(0) else { continue }
                var state = AccountState(accountID: accountID)
                for recorded in try await store.readStream(accountID, on: connection) {
                    status.events += 1
                    guard let event = try state.apply(recorded) else { continue }
                    try await AccountProjector.project(state, events: [event], at: recorded.recordedAt, on: connection)
                }
                replayed += 1
                status.streamsDone += 1
                progress?(status)
            }
            for row in requests.rows {
                guard let requestID = try row.uuid(0) else { continue }
                var challenge = OTPChallenge(requestID: requestID)
                for recorded in try await store.readStream(requestID, on: connection) {
                    status.events += 1
                    guard let event = try challenge.apply(recorded) else { continue }
                    try await OTPProjector.project(requestID, events: [event], at: recorded.recordedAt, clientAddress: nil, on: connection)
                }
                status.streamsDone += 1
                progress?(status)
            }
            return replayed
        }
    }
}
