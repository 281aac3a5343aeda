import Foundation
import LedgerIdentity

/// Checks an Apple server-to-server notification (a JWS signed by a key in Apple's JWKS, from
/// Apple's issuer, for one of this app's client ids) and reads it.
public protocol AppleNotificationVerifier: Sendable {
    /// The notification, or `InvalidAppleNotification` for anything that does not verify.
    func verifyAppleNotification(_ payload: String) async throws -> AppleNotification
}

/// A verified notification: what happened to which Apple ID.
public struct AppleNotification: Sendable, Equatable {
    /// Apple's id of the notification (`jti`).
    public let id: String
    /// The event's `type`; nil for one this version does not know (answered, ignored).
    public let kind: AppleNotice.Kind?
    public let subject: String
    public let eventTime: Date?

    public init(id: String, kind: AppleNotice.Kind?, subject: String, eventTime: Date?) {
        self.id = id
        self.kind = kind
        self.subject = subject
        self.eventTime = eventTime
    }
}

/// A notification whose id the service acted on already, for this account or another: a
/// replay (after a deletion and a re-signup with the same Apple ID, too).
public struct AppleNotificationSeen: Error, Sendable, Equatable {
    public init() {}
}

/// A notification that is not Apple's, or not for this app, or (`isUnavailable`) one that could
/// not be judged because Apple is not configured or its JWKS cannot be read; the reason goes to
/// the log only.
public struct InvalidAppleNotification: Error, Sendable, CustomStringConvertible {
    public let reason: String
    public let isUnavailable: Bool
    public init(_ reason: String, unavailable: Bool = false) {
        self.reason = reason
        self.isUnavailable = unavailable
    }
    public var description: String { "invalid Apple notification: \(reason)" }
}

extension ProviderService {
    /// What a notification did.
    public enum NotificationOutcome: Sendable, Equatable {
        /// The account acted on it (its events are on the account's history).
        case acted
        /// No account has the Apple ID, the type is unknown, or it was acted on before.
        case ignored
    }

    /// Acts on an Apple notification once: `consent-revoked` unlinks Apple (kept when it is the
    /// only method) and ends every session; `account-delete` schedules the deletion as if the
    /// person asked, or disables the account when holds block it; `email-disabled` and
    /// `email-enabled` are recorded. Each notification id acts at most once across the service
    /// (`apple_notifications`), in the same transaction as what it does.
    public func handleAppleNotification(_ payload: String) async throws -> NotificationOutcome {
        guard let notificationVerifier else { throw InvalidAppleNotification("no Apple client ids configured", unavailable: true) }
        let notification = try await notificationVerifier.verifyAppleNotification(payload)
        guard let kind = notification.kind, let owner = try await repository.providerOwner(.apple, subject: notification.subject) else {
            return .ignored
        }
        let retention = environment.retention
        do {
            let (_, events) = try await repository.execute(owner) { state in
                .handleAppleNotification(
                    AppleNotice(
                        id: notification.id, kind: kind, subject: notification.subject, eventTime: notification.eventTime,
                        purgeDelay: retention.purgeDelay, cooldown: retention.cooldown, cooldownKeys: retention.keys(of: state)))
            }
            return events.isEmpty ? .ignored : .acted
        } catch let error as IdentityError where error.code == .noAccount {
            return .ignored  // deleted meanwhile
        } catch is AppleNotificationSeen {
            return .ignored
        }
    }
}
