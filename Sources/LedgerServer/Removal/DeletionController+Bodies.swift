import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerEvents
import LedgerIdentity

/// `{kind, starts_at?, title?, amount?, releases_at?}`.
struct HoldRequest: Decodable {
    let kind: String
    let startsAt: String?
    let title: String?
    let amount: Money?
    let releasesAt: String?
    enum CodingKeys: String, CodingKey { case kind, startsAt = "starts_at", title, amount, releasesAt = "releases_at" }
}
