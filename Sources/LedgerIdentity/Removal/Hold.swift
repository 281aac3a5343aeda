import Foundation

/// An amount of money: `{ "currency": "EUR", "minor": 32050 }`.
public struct Money: Codable, Sendable, Equatable {
    public var currency: String
    /// In the currency's minor unit (cents).
    public var minor: Int64

    public init(currency: String, minor: Int64) {
        self.currency = currency
        self.minor = minor
    }

    /// The largest amount a hold may carry either way (docs/architecture.md "Abuse limits"): sums of
    /// thousands of holds still fit in 64 bits.
    public static let maximumMinorUnits: Int64 = 1_000_000_000_000_000

    /// Whether the currency is an ISO 4217 code as the contract writes money (`EUR`, openapi.yaml's `Money`): three capital
    /// letters. A total sums only amounts of one currency, so a misspelt one would be its own.
    public var hasCurrencyCode: Bool {
        currency.utf8.count == 3 && currency.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }

    /// Whether the amount is within ±`maximumMinorUnits`.
    public var isWithinBounds: Bool { (-Self.maximumMinorUnits...Self.maximumMinorUnits).contains(minor) }

    /// The sum of `amounts` in one currency; nil when they are in several or the sum does not fit.
    public static func total(_ amounts: [Money]) -> Money? {
        guard let currency = amounts.first?.currency, amounts.allSatisfy({ $0.currency == currency }) else { return nil }
        var sum: Int64 = 0
        for amount in amounts {
            let (next, overflow) = sum.addingReportingOverflow(amount.minor)
            if overflow { return nil }
            sum = next
        }
        return Money(currency: currency, minor: sum)
    }
}

/// Why a backend says the account cannot be deleted yet (docs/architecture.md "Deletion").
public enum HoldKind: String, Codable, Sendable, CaseIterable {
    case upcomingSession = "upcoming_session"
    case upcomingBooking = "upcoming_booking"
    case pendingPayout = "pending_payout"
    case dispute

    /// The product's priority: sessions and bookings, then payout, then the rest.
    public var priority: Int {
        switch self {
        case .upcomingSession: return 0
        case .upcomingBooking: return 1
        case .pendingPayout: return 2
        case .dispute: return 3
        }
    }
}

/// One hold a backend reported, by its reference (idempotent per `ref`).
public struct Hold: Codable, Sendable, Equatable {
    public var ref: String
    public var kind: HoldKind
    public var startsAt: Date?
    public var title: String?
    public var amount: Money?
    public var releasesAt: Date?
    /// The API key that placed the hold: only it may change or release the hold (nil for holds
    /// placed before keys owned them, which any `holds:write` key may release).
    public var keyID: String?
    enum CodingKeys: String, CodingKey {
        case ref, kind, startsAt = "starts_at", title, amount, releasesAt = "releases_at", keyID = "key_id"
    }

    public init(
        ref: String, kind: HoldKind, startsAt: Date? = nil, title: String? = nil, amount: Money? = nil, releasesAt: Date? = nil,
        keyID: String? = nil
    ) {
        self.ref = ref
        self.kind = kind
        self.startsAt = startsAt
        self.title = title
        self.amount = amount
        self.releasesAt = releasesAt
        self.keyID = keyID
    }

    /// Whether the hold's time has passed: a session or booking once it starts. A payout and
    /// a dispute stand until the backend releases them: `releases_at` is when pending money can
    /// be withdrawn, and the seeds make money not yet withdrawn a hard block ("Withdraw your
    /// pending balance first"). A session or booking without its date stands too.
    public func hasLapsed(at now: Date) -> Bool {
        switch kind {
        case .upcomingSession, .upcomingBooking: return startsAt.map { $0 <= now } ?? false
        case .pendingPayout, .dispute: return false
        }
    }

    /// When the hold lapses on its own (`hold.lapsed`); nil for one that stands until released.
    public var lapsesAt: Date? {
        switch kind {
        case .upcomingSession, .upcomingBooking: return startsAt
        case .pendingPayout, .dispute: return nil
        }
    }

    /// Whether `keyID` may change or release this hold.
    public func isOwned(by keyID: String?) -> Bool {
        self.keyID == nil || self.keyID == keyID
    }
}

/// The holds of one kind, as the blocker screen shows them.
public struct DeletionBlocker: Sendable, Equatable {
    public var kind: HoldKind
    /// Sessions and bookings by start, payouts by release.
    public var items: [Hold]
}

extension AccountState {
    /// What stands in the way of deleting the account at `now`, in the product's priority
    /// order; empty means the deletion may proceed. A session or booking lapses on its own once
    /// it has started (before its `hold.lapsed` is appended, too), so a backend that forgets to
    /// release it does not block the deletion for ever; payouts and disputes never lapse.
    public func deletionBlockers(at now: Date) -> [DeletionBlocker] {
        Dictionary(grouping: holds.values.filter { !$0.hasLapsed(at: now) }, by: \.kind)
            .sorted { $0.key.priority < $1.key.priority }
            .map { kind, items in
                DeletionBlocker(
                    kind: kind,
                    items: items.sorted {
                        ($0.startsAt ?? $0.releasesAt ?? .distantPast, $0.ref) < ($1.startsAt ?? $1.releasesAt ?? .distantPast, $1.ref)
                    })
            }
    }
}
