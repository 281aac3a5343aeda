import Foundation
import LedgerApp
import Testing

/// The standby's lag read against samples of the primary's log (`WALSamples`,
/// docs/architecture.md "Readers on a standby"): pure, no database.
@Suite("Standby lag from the primary's log samples")
struct WALSamplesTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    static func at(_ seconds: TimeInterval) -> Date { start.addingTimeInterval(seconds) }

    @Test("pg_lsn text: parsed, ordered, counted in bytes, written back")
    func positions() throws {
        let low = try #require(WALPosition("0/16B3748"))
        let high = try #require(WALPosition("16/B374D848"))
        #expect(low.offset == 0x16B_3748 && high.offset == 0x16_B374_D848)
        #expect(low < high && WALPosition("1/0")! > WALPosition("0/FFFFFFFF")!)
        #expect(WALPosition("1/0")!.bytes(since: WALPosition("0/FFFFFFFF")!) == 1)
        #expect(low.bytes(since: high) == 0)
        #expect(high.description == "16/B374D848" && WALPosition("0/0")?.offset == 0)
        for malformed in ["", "16", "16/", "/1", "x/1", "+1/1", "1/2/3", "123456789/0", "0/-1"] {
            #expect(WALPosition(malformed) == nil, "\(malformed)")
        }
    }

    @Test("an idle primary: a standby that has its position is not behind, however long since the last write")
    func idlePrimary() {
        var samples = WALSamples(span: 12)
        let position = WALPosition(offset: 5000)
        for second in 0...600 { samples.record(position, at: Self.at(TimeInterval(second))) }
        #expect(samples.samples.count == 1)
        #expect(samples.lag(of: position, at: Self.at(600.5)) == 0)
        #expect(samples.lag(of: WALPosition(offset: 6000), at: Self.at(600.5)) == 0)
        // Behind the one sample there is: further behind than the samples see.
        #expect(samples.lag(of: WALPosition(offset: 4999), at: Self.at(600.5)) == nil)
    }

    @Test("a primary that writes: the lag is the age of the newest sample the standby has replayed")
    func writingPrimary() {
        var samples = WALSamples(span: 12)
        for second in 0...5 { samples.record(WALPosition(offset: UInt64(100 * (second + 1))), at: Self.at(TimeInterval(second))) }
        let now = Self.at(5.25)
        #expect(samples.lag(of: WALPosition(offset: 600), at: now) == 0)
        #expect(samples.lag(of: WALPosition(offset: 10_000), at: now) == 0)
        #expect(samples.lag(of: WALPosition(offset: 599), at: now) == 1.25)
        #expect(samples.lag(of: WALPosition(offset: 250), at: now) == 4.25)
        #expect(samples.lag(of: WALPosition(offset: 100), at: now) == 5.25)
        #expect(samples.lag(of: WALPosition(offset: 99), at: now) == nil)
        #expect(samples.reach(at: now) == 5.25)
    }

    @Test("samples older than the span go: a standby behind all that are kept is further behind than the span")
    func span() {
        var samples = WALSamples(span: 3)
        for second in 0...10 { samples.record(WALPosition(offset: UInt64(second + 1)), at: Self.at(TimeInterval(second))) }
        #expect(samples.samples.map(\.at) == [Self.at(7), Self.at(8), Self.at(9), Self.at(10)])
        #expect(samples.lag(of: WALPosition(offset: 8), at: Self.at(10)) == 3)
        #expect(samples.lag(of: WALPosition(offset: 7), at: Self.at(10)) == nil)
        #expect(samples.reach(at: Self.at(10)) == 3)
        // A position behind the newest (another primary) starts the samples over.
        samples.record(WALPosition(offset: 2), at: Self.at(11))
        #expect(samples.samples == [WALSamples.Sample(at: Self.at(11), position: WALPosition(offset: 2))])
        #expect(WALSamples(span: 3).lag(of: WALPosition(offset: 1), at: Self.at(0)) == nil)
    }
}
