import Foundation
import LedgerAccounts
import LedgerIdentity
import Testing

@Suite("Event catalogue")
struct EventCatalogTests {
    @Test("docs/events.md is what `ledger events catalog` prints from the code (regenerate it when an event changes)")
    func documentMatchesCode() throws {
        let document = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../docs/events.md").standardized
        let committed = try String(contentsOf: document, encoding: .utf8)
        #expect(
            committed == EventCatalog.markdown(),
            "docs/events.md is stale: run `swift run ledger events catalog > docs/events.md`")
    }

    @Test("every event type is listed once, with the fields its payload reads and what appends it")
    func everyType() {
        let entries = EventCatalog.entries
        #expect(Set(entries.map(\.type)).count == entries.count)
        #expect(entries.count == AccountEvent.Kind.allCases.count + OTPEvent.Kind.allCases.count + StaffEvent.Kind.allCases.count)
        let deletion = entries.first { $0.type == "account.deletion_scheduled" }
        #expect(deletion?.fields.map(\.name) == ["purge_after", "cooldown_until", "cooldown_keys"])
        #expect(deletion?.emittedBy == ["deleteAccount", "handleAppleNotification", "completeRequestedDeletion"])
        #expect(entries.allSatisfy { !$0.emittedBy.isEmpty || $0.type == "account.purged" })
    }

    @Test("the registry holds every account event type once, and reads back what each writes")
    func registryIsWhole() throws {
        let registered = AccountEvent.registrations.map(\.kind)
        #expect(registered.count == AccountEvent.Kind.allCases.count)
        #expect(Set(registered) == Set(AccountEvent.Kind.allCases))
        let event = AccountEvent.holdReleased(.init(ref: "order-7", keyID: "key-1"))
        let read = try AccountEvent.decode(type: event.type, schemaVersion: event.schemaVersion, payload: event.encodedPayload())
        #expect(read == event)
        #expect(try AccountEvent.decode(type: "account.unknown", schemaVersion: 1, payload: Array("{}".utf8)) == nil)
        let otpKinds = OTPEvent.registrations.map(\.kind)
        #expect(otpKinds.count == OTPEvent.Kind.allCases.count && Set(otpKinds) == Set(OTPEvent.Kind.allCases))
        let cancelled = OTPEvent.cancelled(.init())
        #expect(try OTPEvent.decode(type: cancelled.type, schemaVersion: 1, payload: cancelled.encodedPayload()) == cancelled)
        let staffKinds = StaffEvent.registrations.map(\.kind)
        #expect(staffKinds.count == StaffEvent.Kind.allCases.count && Set(staffKinds) == Set(StaffEvent.Kind.allCases))
        let removed = StaffEvent.removed(.init())
        #expect(try StaffEvent.decode(type: removed.type, schemaVersion: 1, payload: removed.encodedPayload()) == removed)
    }
}
