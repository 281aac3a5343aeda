import Foundation
import JWTKit
import LedgerAccounts
import LedgerIdentity

extension JWKSIdentityTokenVerifier: AppleNotificationVerifier {
    /// A notification is a JWS from Apple's issuer, signed by a key in Apple's JWKS, for one of
    /// the app's client ids, like an ID token; its `events` claim (a JSON string, or an object)
    /// says what happened.
    public func verifyAppleNotification(_ payload: String) async throws -> AppleNotification {
        let claims: AppleNotificationClaims
        do {
            claims = try await verifiedClaims(payload, provider: .apple, as: AppleNotificationClaims.self)
        } catch {
            throw InvalidAppleNotification(error.reason, unavailable: error.isUnavailable)
        }
        // Apple sends a notification as it happens and retries it for a while: an older one is a
        // replay (the service remembers every id it acted on for longer than this).
        guard let issuedAt = claims.iat?.value, clock.now().timeIntervalSince(issuedAt) <= notificationMaxAge
        else { throw InvalidAppleNotification("no iat, or older than \(Int(notificationMaxAge)) s") }
        guard let id = claims.jti, !id.isEmpty, (1...200).contains(id.count) else { throw InvalidAppleNotification("no jti") }
        guard let event = claims.events.event, !event.sub.isEmpty else { throw InvalidAppleNotification("no event") }
        return AppleNotification(
            id: id, kind: AppleNotice.Kind(rawValue: event.type), subject: event.sub,
            eventTime: event.eventTime.map { Date(timeIntervalSince1970: $0 / 1000) })
    }
}

/// The claims of an Apple notification. `verify` is empty on purpose, as for ID tokens.
struct AppleNotificationClaims: ProviderClaims {
    let iss: IssuerClaim
    let aud: AudienceClaim
    let iat: IssuedAtClaim?
    let jti: String?
    let events: Events

    /// `events`: Apple sends the event as a JSON string; an object is read too.
    struct Events: Codable {
        let event: Event?

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                event = try? JSONDecoder().decode(Event.self, from: Data(text.utf8))
            } else {
                event = try? container.decode(Event.self)
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(event)
        }
    }

    struct Event: Codable {
        let type: String
        let sub: String
        /// Milliseconds since 1970.
        let eventTime: Double?
        enum CodingKeys: String, CodingKey { case type, sub, eventTime = "event_time" }
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
