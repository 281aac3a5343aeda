import Foundation
import LedgerPostgres

extension AccountProjections {
    /// The projection rows the retention sweep deletes by age, which a rebuild leaves out.
    ///
    /// Why: the events a code request or an email link came from stay, so a rebuild that
    /// projected them all would bring back rows (a phone number, a client's address, a link's
    /// hash) the sweep deleted because their purpose was over, until the sweep ran again. Left
    /// out as they are folded (never written, so no large delete holds the feed back), the
    /// tables a rebuild swaps in are those the incremental path holds after a sweep.
    public struct Expiry: Sendable, Equatable {
        /// Code requests made before this are left out.
        public var otpRequestsMadeBefore: Date
        /// Email links that expired before this are left out.
        public var emailLinksExpiredBefore: Date

        public init(otpRequestsMadeBefore: Date, emailLinksExpiredBefore: Date) {
            self.otpRequestsMadeBefore = otpRequestsMadeBefore
            self.emailLinksExpiredBefore = emailLinksExpiredBefore
        }

        /// Never past the oldest row the live tables hold: what the service still keeps (by its
        /// own settings and clock, which may differ from the rebuild's) a rebuild keeps too, so
        /// only what was deleted already is left out. Two index probes (schema 016).
        func keepingLiveRows(on connection: PostgresConnection) async throws -> Expiry {
            let oldest = try await connection.query(
                "SELECT (SELECT min(created_at) FROM otp_requests), (SELECT min(expires_at) FROM email_links)")
            var kept = self
            if let made = try oldest[0].date(0) { kept.otpRequestsMadeBefore = min(kept.otpRequestsMadeBefore, made) }
            if let expired = try oldest[0].date(1) { kept.emailLinksExpiredBefore = min(kept.emailLinksExpiredBefore, expired) }
            return kept
        }
    }
}
