import Foundation

extension Language {
    /// `seconds` in the largest whole unit, as "it works for …" or "again in …" says it:
    /// "5 minutes", "5 წუთი", "5 минут" (Russian's accusative: "через 5 минут" reads as well).
    /// A Russian count takes its noun's form here, so no template or message needs grammar.
    public func duration(_ seconds: Int) -> String {
        let units: [(size: Int, unit: DurationUnit)] = [(86_400, .day), (3600, .hour), (60, .minute)]
        let (size, unit) = units.first { seconds > 0 && seconds % $0.size == 0 } ?? (1, .second)
        let count = seconds / size
        return "\(count) \(noun(unit, count: count))"
    }

    /// The units a duration is said in, largest first.
    public enum DurationUnit: Int, CaseIterable, Sendable { case day, hour, minute, second }

    /// `unit`'s noun after `count`.
    public func noun(_ unit: DurationUnit, count: Int) -> String {
        switch self {
        case .en:
            let singular = ["day", "hour", "minute", "second"][unit.rawValue]
            return count == 1 ? singular : singular + "s"
        case .ka:
            // A Georgian noun after a number stays singular.
            return ["დღე", "საათი", "წუთი", "წამი"][unit.rawValue]
        case .ru:
            // Accusative: one, a few (2–4), many; 11–14 are many.
            let forms = [
                ["день", "дня", "дней"], ["час", "часа", "часов"], ["минуту", "минуты", "минут"], ["секунду", "секунды", "секунд"],
            ][unit.rawValue]
            let (tens, ones) = (count % 100, count % 10)
            if (11...14).contains(tens) { return forms[2] }
            return ones == 1 ? forms[0] : (2...4).contains(ones) ? forms[1] : forms[2]
        }
    }

    /// The seconds of an English duration as `duration` writes it ("7 days" → 604800); nil
    /// for any other text. It lets a message written in English be said again in another language.
    public static func seconds(ofEnglishDuration text: Substring) -> Int? {
        let words = text.split(separator: " ", omittingEmptySubsequences: false)
        // Digits only, and at most six of them: no sign, no overflow, nothing that is not a duration.
        guard words.count == 2, (1...6).contains(words[0].count), words[0].allSatisfy({ $0.isASCII && $0.isNumber }),
            let count = Int(words[0]), count > 0,
            let unit = DurationUnit.allCases.first(where: { Language.en.noun($0, count: count) == words[1] })
        else { return nil }
        return count * [86_400, 3600, 60, 1][unit.rawValue]
    }
}
