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
}
