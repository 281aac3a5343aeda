import Foundation

/// The countries of the phone picker (see `Resources/ATTRIBUTION.md`).
public struct Country: Sendable, Equatable, Codable {
    public let iso: String
    public let name: String
    public let flag: String
    public let dialCode: String
    /// Digits after the dial code, without the trunk prefix.
    public let nationalLengths: [Int]
    public let nationalPrefix: String?

    enum CodingKeys: String, CodingKey {
        case iso, name, flag, dialCode = "dial_code", nationalLengths = "national_lengths", nationalPrefix = "national_prefix"
    }
}

/// The bundled country list, ordered the way the product spec's "Popular section logic" says: the
/// caller's locale country first, then Georgia, the United States and the United Kingdom, then
/// the rest by name.
public struct CountryCatalog: Sendable {
    public let countries: [Country]
    private let byISO: [String: Country]
    private let byDialCode: [String: [Country]]
    private let longestDialCode: Int

    public static let popular = ["GE", "US", "GB"]

    public init(countries: [Country]) {
        self.countries = countries.sorted { $0.name.localizedStandardCompare($1.name) == .orderedAscending }
        self.byISO = Dictionary(countries.map { ($0.iso, $0) }, uniquingKeysWith: { first, _ in first })
        self.byDialCode = Dictionary(grouping: self.countries, by: \.dialCode)
        self.longestDialCode = countries.map(\.dialCode.utf8.count).max() ?? 0
    }

    /// The countries whose dial code begins `international` (`+995…`), shorter codes first: a
    /// lookup per prefix length instead of a pass over every country (an import parses a
    /// number per record).
    public func countries(dialing international: String) -> [Country] {
        let head = Array(international.utf8.prefix(longestDialCode))
        guard head.count >= 2 else { return [] }
        return (2...head.count).flatMap { byDialCode[String(decoding: head[..<$0], as: UTF8.self)] ?? [] }
    }

    /// The bundled list.
    public static let standard: CountryCatalog = {
        guard let url = Bundle.module.url(forResource: "countries", withExtension: "json"),
            let data = try? Data(contentsOf: url),
            let countries = try? JSONDecoder().decode([Country].self, from: data)
        else { return CountryCatalog(countries: []) }
        return CountryCatalog(countries: countries)
    }()

    public func country(iso: String) -> Country? {
        byISO[iso.uppercased()]
    }

    /// The list for a BCP 47 or POSIX locale (`ka-GE`, `en_US`); a locale without a known
    /// region puts only the three defaults first.
    public func ordered(locale: String?) -> [Country] {
        var leading: [String] = []
        if let region = Self.region(of: locale), byISO[region] != nil { leading.append(region) }
        for iso in Self.popular where !leading.contains(iso) { leading.append(iso) }
        let head = leading.compactMap { byISO[$0] }
        return head + countries.filter { !leading.contains($0.iso) }
    }

    /// The region subtag: the last two-letter part after the language (`ka-GE` → `GE`).
    static func region(of locale: String?) -> String? {
        guard let locale else { return nil }
        let parts = locale.split(whereSeparator: { $0 == "-" || $0 == "_" }).dropFirst()
        return parts.last { $0.count == 2 && $0.allSatisfy(\.isLetter) }.map { $0.uppercased() }
    }
}
