import Foundation
import LedgerIdentity
import Testing

@Suite("RFC 3339 timestamps")
struct RFC3339Tests {
    @Test("format writes whole seconds, truncated, as Foundation's formatter does; parse reads them back")
    func roundTrip() throws {
        let reference = ISO8601DateFormatter()
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let micros = Int64.random(in: -2_000_000_000_000_000...4_000_000_000_000_000, using: &generator)
            let date = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
            let text = RFC3339.format(date)
            let seconds = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
            let whole = Date(timeIntervalSince1970: Double(seconds))
            #expect(try #require(RFC3339.parse(text), "\(text)") == whole, "\(text)")
            #expect(text == reference.string(from: whole))
        }
        #expect(RFC3339.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
    }

    @Test("a time with a fraction is shown to the second, never rounded up (what generated clients decode)")
    func noFraction() {
        #expect(RFC3339.format(Date(timeIntervalSince1970: 1_790_000_000.123456)) == "2026-09-21T14:13:20Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: 1_790_000_000.999999)) == "2026-09-21T14:13:20Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: -0.25)) == "1969-12-31T23:59:59Z")
        var bytes: [UInt8] = []
        RFC3339.append(Date(timeIntervalSince1970: 1_790_000_000.5), to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "2026-09-21T14:13:20Z")
    }

    @Test("the end of a shown second: a query at a shown time covers everything recorded within it")
    func endOfSecond() {
        let shown = Date(timeIntervalSince1970: 1_790_000_000)
        for recorded in [0, 0.000_001, 0.5, 0.999_999] {
            let end = RFC3339.endOfSecond(shown.addingTimeInterval(recorded))
            #expect(abs(end.timeIntervalSince1970 - 1_790_000_000.999_999) < 0.000_000_5)
            #expect(shown.addingTimeInterval(recorded) <= end)
        }
        #expect(RFC3339.endOfSecond(shown.addingTimeInterval(1)) > shown.addingTimeInterval(1))
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
