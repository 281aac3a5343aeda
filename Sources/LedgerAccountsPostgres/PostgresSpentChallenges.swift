import Foundation
import LedgerAccounts
import LedgerPostgres

/// Answered passkey challenges in `spent_passkey_challenges`, shared by every instance: the
/// first answer's insert wins, wherever it arrives.
public struct PostgresSpentChallenges: SpentChallenges {
    let client: PostgresClient

    public init(client: PostgresClient) {
        self.client = client
    }

    public func spend(_ challengeHash: [UInt8], expiresAt: Date) async throws -> Bool {
        try await client.query(
            "INSERT INTO spent_passkey_challenges (challenge_sha256, expires_at) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1",
            [.bytea(challengeHash), .timestamp(expiresAt)]
        ).rowCount == 1
    }
}
