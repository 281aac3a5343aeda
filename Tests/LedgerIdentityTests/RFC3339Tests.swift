import Foundation
import LedgerIdentity
import Testing

@Suite("RFC 3339 timestamps")
struct RFC3339Tests {
    @Test("format and parse round-trip to the microsecond, and agree with Foundation's formatter")
    func roundTrip() throws {
        let reference = ISO8601DateFormatter()
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let micros = Int64.random(in: -2_000_000_000_000_000...4_000_000_000_000_000, using: &generator)
            let date = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
            let text = RFC3339.format(date)
            let parsed = try #require(RFC3339.parse(text), "\(text)")
            #expect(abs(parsed.timeIntervalSince(date)) < 0.000_001, "\(text)")
            let whole = Date(timeIntervalSince1970: floor(date.timeIntervalSince1970))
            #expect(RFC3339.format(whole) == reference.string(from: whole))
        }
        #expect(RFC3339.format(Date(timeIntervalSince1970: 1_790_000_000.123456)) == "2026-09-21T14:13:20.123456Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
    }

    @Test("offsets, fractions of any length, and lower-case separators")
    func variants() {
        let base = Date(timeIntervalSince1970: 1_790_000_000)
        #expect(RFC3339.parse("2026-09-21T14:13:20Z") == base)
        #expect(RFC3339.parse("2026-09-21t14:13:20z") == base)
        #expect(RFC3339.parse("2026-09-21T18:13:20+04:00") == base)
        #expect(RFC3339.parse("2026-09-21T09:43:20-04:30") == base)
        #expect(RFC3339.parse("2026-09-21T14:13:20.5Z") == base.addingTimeInterval(0.5))
        #expect(RFC3339.parse("2026-09-21T14:13:20.123456789Z")?.timeIntervalSince1970 == 1_790_000_000.123456)
    }

    @Test("anything else is nil")
    func invalid() {
        for text in [
            "", "2026-09-21", "2026-09-21T14:13:20", "2026-13-21T14:33:20Z", "2026-09-21T24:00:00Z",
            "2026-09-21T14:13:20.Z", "2026-09-21T14:13:20Zjunk", "２026-09-21T14:33:20Z", "2026-09-21T14:13:20+0400",
        ] {
            #expect(RFC3339.parse(text) == nil, "\(text)")
        }
    }
}
