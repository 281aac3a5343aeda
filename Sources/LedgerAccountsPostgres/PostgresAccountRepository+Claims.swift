import Foundation
import LedgerAccounts
import LedgerCore
import LedgerIdentity
import LedgerPostgres

/// The re-signup cooldown where a claim is made: inside the transaction that writes it.
///
/// A check before the transaction is not enough: a sign-up racing the deletion of the same
/// address would read "no cooldown" before the deletion commits, then wait on the address's
/// unique index until the deletion frees it, and take it. So every transaction that claims an
/// identifier, and every deletion that lists identifiers on the cooldown, first takes a
/// transaction lock on the identifier's keyed hash (never the identifier itself); a claim then
/// reads the cooldown list under that lock and sees any deletion that got there first.
extension PostgresAccountRepository {
    /// Locks the identifiers `events` claim or put on the cooldown list (in one order, so two
    /// such transactions never wait on each other in a circle), then refuses a claim of an
    /// identifier on the list with `409 signup_cooldown` (or `409 email_held`, an address held for
    /// another account's revert link), unless the account itself put it there.
    func guardClaims(_ events: [AccountEvent], of accountID: UUID, at now: Date, on connection: PostgresConnection) async throws {
        let claimed = Retention.Identifier.claimed(by: events).map { Hex.encode(retention.key($0)) }
        let locked = Set(claimed + Retention.Listing.listed(by: events).map(\.key)).sorted()
        guard !locked.isEmpty else { return }
        for key in locked {
            connection.queue("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [.text("claim:" + key)])
        }
        guard !claimed.isEmpty else { return }
        // A deleted account's listing first: its copy is the one that holds longest.
        let listed = try await connection.query(
            """
            SELECT reason FROM signup_cooldowns
            WHERE key_hmac IN (SELECT decode(k, 'hex') FROM unnest(string_to_array($1, ',')) AS k) AND until > $2
              AND account_id IS DISTINCT FROM $3
            ORDER BY reason = 'deleted' DESC
            LIMIT 1
            """,
            [.text(claimed.joined(separator: ",")), .timestamp(now), .uuid(accountID)])
        if listed.rowCount > 0 { throw retention.refusal(listed[0].string(0).flatMap(Retention.Listing.Reason.init) ?? .deleted) }
    }
}
