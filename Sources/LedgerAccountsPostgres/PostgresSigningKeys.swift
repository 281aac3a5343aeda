import Foundation
import LedgerAccounts
import LedgerPostgres

/// The signing keys in `signing_keys` (schema/033).
public struct PostgresSigningKeys: SigningKeyStore {
    let client: PostgresClient

    public init(client: PostgresClient) {
        self.client = client
    }

    public func all() async throws -> [SigningKeyRecord] {
        try await client.query(
            """
            SELECT kid, sealed_key, master_key_id, public_jwk->>'x', public_jwk->>'y', created_at, activates_at
              FROM signing_keys ORDER BY activates_at, kid
            """
        ).rows.map { row in
            SigningKeyRecord(
                kid: row.string(0) ?? "", sealedKey: try row.bytes(1), masterKeyID: row.string(2) ?? "", x: row.string(3) ?? "",
                y: row.string(4) ?? "", createdAt: try row.date(5) ?? .distantPast, activatesAt: try row.date(6) ?? .distantFuture)
        }
    }

    public func insert(_ record: SigningKeyRecord) async throws {
        try await client.query(
            """
            INSERT INTO signing_keys (kid, sealed_key, master_key_id, public_jwk, created_at, activates_at)
            VALUES ($1, $2, $3, jsonb_build_object('kty', 'EC', 'crv', 'P-256', 'x', $4::text, 'y', $5::text), $6, $7)
            """,
            [
                .text(record.kid), record.sealedKey.map { .bytea($0) } ?? .null, .text(record.masterKeyID), .text(record.x),
                .text(record.y), .timestamp(record.createdAt), .timestamp(record.activatesAt),
            ])
    }

    public func erasePrivateKeys(_ kids: [String]) async throws {
        try await client.query("UPDATE signing_keys SET sealed_key = NULL WHERE kid = ANY($1::text[])", [.textArray(kids)])
    }
}
