import Foundation
import LedgerAccounts
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres

/// The pictures in `avatars` (schema/036_avatars.sql), sealed under the account's data key and
/// written in the transaction that appends their event, under the stream's lock.
public struct PostgresAvatarRepository: AvatarRepository {
    let accounts: PostgresAccountRepository

    public init(accounts: PostgresAccountRepository) {
        self.accounts = accounts
    }

    var store: EventStore { accounts.store }

    public func changeAvatar(_ accountID: UUID, picture: [UInt8]?, _ command: AccountCommand) async throws -> AccountState {
        let (state, events) = try await store.client.transaction { connection in
            let outcome = try await accounts.execute(accountID, outbox: [], { _ in command }, at: accounts.clock.now(), on: connection)
            guard !outcome.1.isEmpty else { return outcome }
            if let picture, let etag = outcome.0.avatarETag {
                guard
                    let sealed = try await store.seal(
                        picture, subjectID: accountID, binding: Self.sealBinding(accountID: accountID, etag: etag), on: connection)
                else { throw IdentityError(.noAccount, "No account found.") }
                try await connection.query(
                    """
                    INSERT INTO avatars (account_id, etag, sealed, updated_at) VALUES ($1, $2, $3, $4)
                    ON CONFLICT (account_id) DO UPDATE SET etag = EXCLUDED.etag, sealed = EXCLUDED.sealed, updated_at = EXCLUDED.updated_at
                    """,
                    [.uuid(accountID), .text(etag), .bytea(sealed), .timestamp(accounts.clock.now())])
            } else if outcome.0.avatarETag == nil {
                try await connection.query("DELETE FROM avatars WHERE account_id = $1", [.uuid(accountID)])
            }
            return outcome
        }
        if !events.isEmpty { store.committed() }
        return state
    }

    public func avatar(of publicID: PublicUserID, etag: String) async throws -> [UInt8]? {
        let range = publicID.accountIDs
        return try await store.client.withConnection { connection in
            let rows = try await connection.queryBinary(
                """
                SELECT v.account_id, v.sealed FROM avatars v JOIN accounts a ON a.account_id = v.account_id
                WHERE v.account_id BETWEEN $1 AND $2 AND v.etag = $3 AND a.deleted_at IS NULL
                """,
                [.uuid(range.lowest), .uuid(range.highest), .text(etag)])
            guard rows.rowCount == 1, let accountID = try rows[0].binaryUUID(0), let sealed = rows[0].binaryBytes(1) else { return nil }
            do {
                return try await store.open(
                    sealed, subjectID: accountID, binding: Self.sealBinding(accountID: accountID, etag: etag), on: connection)
            } catch is CryptoError {
                // Sealed for another account or version (a row moved by hand): no such picture.
                return nil
            }
        }
    }

    public func tileSubject(of publicID: PublicUserID) async throws -> InitialsTile.Subject? {
        let range = publicID.accountIDs
        let rows = try await store.client.query(
            """
            SELECT account_id, display_name, handle, handle_is_temporary FROM accounts
            WHERE account_id BETWEEN $1 AND $2 AND deleted_at IS NULL
            """,
            [.uuid(range.lowest), .uuid(range.highest)])
        // Two live accounts sharing a user id (past millions of accounts): neither is drawn.
        guard rows.rowCount == 1, let accountID = try rows[0].uuid(0) else { return nil }
        return InitialsTile.Subject(
            accountID: accountID, displayName: rows[0].string(1), handle: rows[0].string(2),
            handleIsTemporary: try rows[0].bool(3) ?? false)
    }
}
