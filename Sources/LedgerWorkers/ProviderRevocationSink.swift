import Foundation
import LedgerAccounts
import LedgerDelivery
import LedgerIdentity

/// Delivers the outbox's `provider` messages: opens the sealed refresh token and revokes it at
/// the provider. A failure is retried with the dispatcher's backoff like any delivery.
public struct ProviderRevocationSink: DeliverySink {
    let revocations: ProviderTokenRevocations
    let client: any ProviderTokenClient

    public init(revocations: ProviderTokenRevocations, client: any ProviderTokenClient) {
        self.revocations = revocations
        self.client = client
    }

    public var provider: String { "provider" }

    public func deliver(_ message: OutboxMessage) async throws {
        guard let revocation = revocations.open(message) else {
            throw DeliveryError("the revocation's token cannot be opened (another master key, or altered)")
        }
        do {
            try await client.revoke(refreshToken: revocation.refreshToken, provider: revocation.provider, clientID: revocation.clientID)
        } catch let error as ProviderTokenError {
            throw DeliveryError(error.description)
        }
    }
}
