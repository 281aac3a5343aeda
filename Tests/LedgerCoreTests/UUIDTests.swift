import Foundation
import LedgerCore
import Testing

@Suite("Random UUIDs")
struct RandomUUIDTests {
    @Test("random UUIDs are version 4, RFC 4122 variant, and do not repeat")
    func versionAndVariant() {
        let ids = (0..<1_000).map { _ in UUID.random() }
        #expect(Set(ids).count == ids.count)
        for id in ids {
            let text = id.lowercased
            #expect(Array(text)[14] == "4")
            #expect("89ab".contains(Array(text)[19]))
            #expect(UUID(uuidString: text) == id)
        }
    }
}

@Suite("Time-ordered UUIDs")
struct TimeOrderedUUIDTests {
    @Test("time-ordered UUIDs are version 7, carry the millisecond, sort by time, and do not repeat")
    func versionOrderAndTime() {
        let start = Date(timeIntervalSince1970: 1_795_000_000.123)
        let ids = (0..<1_000).map { UUID.timeOrdered(at: start.addingTimeInterval(Double($0) / 100)) }
        #expect(Set(ids).count == ids.count)
        for id in ids {
            let text = id.lowercased
            #expect(Array(text)[14] == "7")
            #expect("89ab".contains(Array(text)[19]))
        }
        // Later milliseconds sort later, as text and as PostgreSQL's uuid order (bytes).
        let texts = ids.map(\.lowercased)
        #expect(texts == texts.sorted())
        // The first 48 bits are the Unix time in milliseconds.
        #expect(ids[0].lowercased.filter { $0 != "-" }.hasPrefix(String(1_795_000_000_123, radix: 16).leftPadded(to: 12)))
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
