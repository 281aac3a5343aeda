import Foundation

/// Which signing key does what at a given time, from the keys alone (pure: tested without a
/// database in `SigningKeyScheduleTests`). Keys take turns by activation: the newest key whose
/// activation has come signs (`current`); a newer one not yet active is published so caches of
/// the key set hold it before it signs (`next`); an older one stays published until the last
/// token it signed has expired (`retiring`), and then is `retired`: unpublished, its private
/// half no longer needed.
public struct SigningKeySchedule: Sendable {
    public enum State: String, Sendable {
        case next, current, retiring, retired
    }

    /// The keys, oldest activation first.
    public let keys: [SigningKeyRecord]
    /// How long an access token lives: a retiring key is published that long after it stopped signing.
    public let tokenLifetime: TimeInterval
    /// Slack for instances that read the keys up to `JWTAccessTokens.reloadInterval` late, or
    /// whose clocks differ: a key retires this much later, and a next key verifies this much
    /// before its activation (another instance may already sign with it).
    public static let margin: TimeInterval = 60

    public init(keys: [SigningKeyRecord], tokenLifetime: TimeInterval) {
        self.keys = keys.sorted { ($0.activatesAt, $0.kid) < ($1.activatesAt, $1.kid) }
        self.tokenLifetime = tokenLifetime
    }

    /// The key that signs at `now`: the last one activated; nil before any has.
    public func signing(at now: Date) -> SigningKeyRecord? {
        keys.last { $0.activatesAt <= now }
    }

    /// The state of `key` at `now`.
    public func state(of key: SigningKeyRecord, at now: Date) -> State {
        guard key.activatesAt <= now else { return .next }
        guard let index = keys.firstIndex(where: { $0.kid == key.kid }) else { return .retired }
        // Superseded by the first later key already active: it signed until then.
        guard let successor = keys[(index + 1)...].first(where: { $0.activatesAt <= now }) else { return .current }
        return now < successor.activatesAt.addingTimeInterval(tokenLifetime + Self.margin) ? .retiring : .retired
    }

    /// The keys `/.well-known/jwks.json` lists at `now`: next, current and retiring.
    public func published(at now: Date) -> [SigningKeyRecord] {
        keys.filter { state(of: $0, at: now) != .retired }
    }

    /// The keys a token presented at `now` may be signed with: current and retiring, and a next
    /// key within `margin` of its activation (an instance whose clock runs ahead signs with it).
    public func verifying(at now: Date) -> [SigningKeyRecord] {
        keys.filter {
            switch state(of: $0, at: now) {
            case .current, .retiring: true
            case .next: $0.activatesAt <= now.addingTimeInterval(Self.margin)
            case .retired: false
            }
        }
    }

    /// When a key made at `now` starts signing: at once when no key signs yet (nothing can
    /// have cached a key set), else after `activationDelay`, so every cache of the key set
    /// holds it first.
    public func activation(ofKeyMadeAt now: Date, activationDelay: TimeInterval) -> Date {
        signing(at: now) == nil ? now : now.addingTimeInterval(activationDelay)
    }
}
