import Foundation

/// RFC 3339 UTC timestamps with microseconds: `2026-11-22T03:46:16.123456Z`.
public enum RFC3339 {
    public static func format(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        var seconds = micros / 1_000_000
        var fraction = micros % 1_000_000
        if fraction < 0 { fraction += 1_000_000; seconds -= 1 }
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let base = String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec)
        return fraction == 0 ? base + "Z" : base + String(format: ".%06lldZ", fraction)
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
