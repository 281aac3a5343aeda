import Foundation
import LedgerAccounts
import Testing

/// Which signing key does what, from the keys alone.
@Suite("Signing keys: the schedule")
struct SigningKeyScheduleTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    static func key(_ kid: String, activatesAfter seconds: TimeInterval) -> SigningKeyRecord {
        SigningKeyRecord(
            kid: kid, sealedKey: [1], masterKeyID: "m", x: "x", y: "y", createdAt: start,
            activatesAt: start.addingTimeInterval(seconds))
    }

    @Test("the first key signs at once; a later one is published first and signs after the activation delay")
    func firstAtOnceLaterAfterDelay() {
        let empty = SigningKeySchedule(keys: [], tokenLifetime: 900)
        #expect(empty.activation(ofKeyMadeAt: Self.start, activationDelay: 600) == Self.start)
        #expect(empty.signing(at: Self.start) == nil)
        let one = SigningKeySchedule(keys: [Self.key("a", activatesAfter: 0)], tokenLifetime: 900)
        #expect(one.activation(ofKeyMadeAt: Self.start, activationDelay: 600) == Self.start.addingTimeInterval(600))
    }

    @Test("next, current, retiring until its last token expired, then retired and unpublished")
    func statesOverTime() {
        let a = Self.key("a", activatesAfter: 0)
        let b = Self.key("b", activatesAfter: 1000)
        let schedule = SigningKeySchedule(keys: [b, a], tokenLifetime: 900)
        func at(_ seconds: TimeInterval) -> Date { Self.start.addingTimeInterval(seconds) }

        #expect(schedule.state(of: a, at: at(10)) == .current)
        #expect(schedule.state(of: b, at: at(10)) == .next)
        #expect(schedule.signing(at: at(999))?.kid == "a")
        #expect(schedule.published(at: at(10)).map(\.kid) == ["a", "b"])
        // A next key has signed nothing: a token claiming it is not verified with it, but in the
        // last minute before its activation (an instance whose clock runs ahead signs with it).
        #expect(schedule.verifying(at: at(10)).map(\.kid) == ["a"])
        #expect(schedule.verifying(at: at(940)).map(\.kid) == ["a", "b"])

        #expect(schedule.signing(at: at(1000))?.kid == "b")
        #expect(schedule.state(of: a, at: at(1000)) == .retiring)
        // The last token `a` signed (just before 1000) expires by 1900; a minute's margin for
        // instances that read the keys late, or whose clocks differ.
        #expect(schedule.verifying(at: at(1959)).map(\.kid) == ["a", "b"])
        #expect(schedule.state(of: a, at: at(1960)) == .retired)
        #expect(schedule.published(at: at(1960)).map(\.kid) == ["b"])
        #expect(schedule.verifying(at: at(1960)).map(\.kid) == ["b"])
    }

    @Test("two rotations in a row: each key retires from the moment the next one activates")
    func rotationsInARow() {
        let keys = [Self.key("a", activatesAfter: 0), Self.key("b", activatesAfter: 600), Self.key("c", activatesAfter: 700)]
        let schedule = SigningKeySchedule(keys: keys, tokenLifetime: 900)
        let at650 = Self.start.addingTimeInterval(650)
        #expect(schedule.signing(at: at650)?.kid == "b")
        #expect(schedule.published(at: at650).map(\.kid) == ["a", "b", "c"])
        let at1610 = Self.start.addingTimeInterval(1610)
        #expect(schedule.state(of: keys[0], at: at1610) == .retired)
        #expect(schedule.state(of: keys[1], at: at1610) == .retiring)
        #expect(schedule.state(of: keys[1], at: Self.start.addingTimeInterval(1660)) == .retired)
    }
}
