import Foundation
import LedgerIdentity
import LedgerPostgres

/// Writes the `otp_requests` rows of one request from its new events.
enum OTPProjector {
    static func project(
        _ requestID: UUID, events: [OTPEvent], at time: Date, clientAddress: String?, on connection: PostgresConnection
    ) async throws {
        for event in events {
            switch event {
            case .issued(let issued):
                try await connection.query(
                    """
                    INSERT INTO otp_requests (request_id, account_id, session_id, purpose, phone_e164, client_address, created_at, expires_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (request_id) DO NOTHING
                    """,
                    [
                        .uuid(requestID), .uuid(issued.accountID), issued.sessionID.map { .uuid($0) } ?? .null,
                        .text(issued.purpose.rawValue), .text(issued.phone), clientAddress.map { .text($0) } ?? .null,
                        .timestamp(time), .timestamp(issued.expiresAt),
                    ])
            case .verified, .invalidated, .cancelled:
                try await connection.query(
                    "UPDATE otp_requests SET closed_at = $2 WHERE request_id = $1 AND closed_at IS NULL",
                    [.uuid(requestID), .timestamp(time)])
            case .failed:
                continue
            }
        }
    }
}
