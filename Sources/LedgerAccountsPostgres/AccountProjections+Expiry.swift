import Foundation
import LedgerPostgres

extension AccountProjections {
    /// The projection rows the retention sweep deletes by age, which a rebuild leaves out.
    ///
    /// Why: the events a code request or an email link came from stay, so a rebuild that
    /// projected them all would bring back rows (a phone number, a client's address, a link's
    /// hash) the sweep deleted because their purpose was over, until the sweep ran again. Left
    /// out, the tables a rebuild swaps in are those the incremental path holds after a sweep.
    public struct Expiry: Sendable, Equatable {
        /// Code requests made before this are left out.
        public var otpRequestsMadeBefore: Date
        /// Email links that expired before this are left out.
        public var emailLinksExpiredBefore: Date

        public init(otpRequestsMadeBefore: Date, emailLinksExpiredBefore: Date) {
            self.otpRequestsMadeBefore = otpRequestsMadeBefore
            self.emailLinksExpiredBefore = emailLinksExpiredBefore
        }
    }

    /// Deletes the expired rows from the tables first on the search path (the fresh ones while
    /// a rebuild writes them). Both deletes are index range scans (schema 016), so the one that
    /// runs under the swap's locks costs about nothing once the load's rows are pruned.
    static func prune(_ expiry: Expiry?, on connection: PostgresConnection) async throws {
        guard let expiry else { return }
        connection.queue("DELETE FROM otp_requests WHERE created_at < $1", [.timestamp(expiry.otpRequestsMadeBefore)])
        try await connection.query("DELETE FROM email_links WHERE expires_at < $1", [.timestamp(expiry.emailLinksExpiredBefore)])
    }
}
