import Foundation
import LedgerCore

/// RFC 3339 UTC timestamps with microseconds: `2026-11-22T03:46:16.123456Z`.
public enum RFC3339 {
    public static func format(_ date: Date) -> String {
        let time = UTCTime(date)
        let base = time.dateAndTime(separator: "T")
        return time.microsecond == 0 ? base + "Z" : base + String(format: ".%06lldZ", time.microsecond)
    }

    public static func parse(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) {
            // ISO8601DateFormatter keeps only milliseconds; recover microseconds by hand.
            return withMicroseconds(text, base: date)
        }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    private static func withMicroseconds(_ text: String, base: Date) -> Date {
        guard let dot = text.firstIndex(of: "."), let end = text[dot...].firstIndex(where: { !$0.isNumber && $0 != "." })
        else { return base }
        let digits = String(text[text.index(after: dot)..<end].prefix(6)).padding(toLength: 6, withPad: "0", startingAt: 0)
        guard let micros = Int(digits) else { return base }
        let whole = floor(base.timeIntervalSince1970)
        return Date(timeIntervalSince1970: whole + Double(micros) / 1_000_000)
    }
}
