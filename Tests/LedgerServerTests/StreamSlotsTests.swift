import Testing

@testable import LedgerServer

@Suite("Event stream slots")
struct StreamSlotsTests {
    @Test("a slot goes back when released, or when its last reference goes (a body that never ran)")
    func slotsComeBack() {
        let slots = StreamSlots(perKey: 2)
        let key: [UInt8] = [1, 2, 3]
        let first = slots.take(key)
        var second = slots.take(key)
        #expect(first != nil && second != nil)
        #expect(slots.take(key) == nil)
        #expect(slots.take([9]) != nil)
        // Dropped without a release: a client gone before the head was written.
        second = nil
        let third = slots.take(key)
        #expect(third != nil)
        // Released twice counts once.
        first?.release()
        first?.release()
        let fourth = slots.take(key)
        #expect(fourth != nil)
        #expect(slots.take(key) == nil)
        _ = (second, third, fourth)
    }

    @Test("the counts, without a server: a key's streams stop at its limit, other keys count apart, none are left behind")
    func countsStateMachine() {
        var counts = StreamSlots.Counts(perKey: 2)
        let taken = [counts.take([1]), counts.take([1]), counts.take([1]), counts.take([2])]
        #expect(taken == [true, true, false, true])
        counts.release([1])
        let again = counts.take([1])
        #expect(again)
        for _ in 0..<2 { counts.release([1]) }
        counts.release([2])
        #expect(counts.open.isEmpty)
    }
}
