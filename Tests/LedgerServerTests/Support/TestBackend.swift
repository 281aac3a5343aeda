import Foundation
import LedgerCore
import LedgerTestSupport
import Testing

/// What the HTTP tests read besides the API: the messages the service queued (the codes and
/// links a user would receive) and the clock they move. `PostgresBackend.swift` reads a test
/// database's tables; `MemoryBackend` the in-memory repositories.
protocol TestBackend: Sendable {
    var clock: ManualClock { get }
    /// The newest queued message of `template` (to `recipient` when given): (recipient, code, token).
    func newestMessage(template: String, to recipient: String?) async throws -> QueuedMessage?
    /// How many events are stored (accounts' and code requests'), of `type` when given: a
    /// refused request adds none.
    func storedEventCount(type: String?) async throws -> Int
    /// Every queued message (of `template` when given), oldest first.
    func queuedMessages(template: String?) async throws -> [QueuedMessage]
    /// How many accounts exist (deleted ones included).
    func accountCount() async throws -> Int
    /// Every session of every account, live or ended.
    func sessions() async throws -> [SessionRow]
    /// How many links of `purpose` (`email_change`, …) are neither used nor ended.
    func unusedLinkCount(purpose: String) async throws -> Int
}

/// A session as a test looks at it.
struct SessionRow: Sendable {
    /// The account's email, when it has one.
    let accountEmail: String?
    let live: Bool
    let revokedReason: String?
}

extension TestBackend {
    func storedEventCount() async throws -> Int { try await storedEventCount(type: nil) }
}

/// A message as the outbox holds it, with what a test takes from it.
struct QueuedMessage: Sendable {
    let to: String
    let code: String?
    let token: String?
    var link: String? = nil
    var details: [String: String]? = nil
    var locale: String? = nil
    var channel: String? = nil
}
