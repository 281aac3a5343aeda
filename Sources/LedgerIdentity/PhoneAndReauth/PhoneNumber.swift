import Foundation

/// A phone number in E.164 with the region the user picked (several regions share a dial
/// code: +1, +7). Validated by the region's national lengths only ("no libphonenumber heavy
/// dependency — simple length rule", the product spec).
public struct PhoneNumber: Sendable, Hashable, CustomStringConvertible {
    /// `+995511200300`.
    public let e164: String
    /// ISO code of the picked region.
    public let region: String

    public var description: String { e164 }

    /// Normalizes what a user typed for `country`: spaces, dashes, dots and parentheses are
    /// ignored; `+` or `00` followed by the dial code, or the national number with or without
    /// its trunk prefix (UK `07400 123456`, RU `8 912 …`) are accepted. Nil when the digits do
    /// not make a national number of one of the region's lengths.
    public init?(_ raw: String, country: Country) {
        var text = raw.filter { !" -.()\u{00A0}".contains($0) }
        let dialDigits = String(country.dialCode.dropFirst())
        var international = false
        if text.hasPrefix("+") {
            text.removeFirst()
            international = true
        } else if text.hasPrefix("00") {
            text.removeFirst(2)
            international = true
        }
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        var national = text
        if international {
            guard text.hasPrefix(dialDigits) else { return nil }
            national = String(text.dropFirst(dialDigits.count))
        } else if let prefix = country.nationalPrefix, !prefix.isEmpty, national.hasPrefix(prefix),
            !country.nationalLengths.contains(national.count),
            country.nationalLengths.contains(national.count - prefix.count)
        {
            national.removeFirst(prefix.count)
        }
        guard country.nationalLengths.contains(national.count) else { return nil }
        self.e164 = country.dialCode + national
        self.region = country.iso
    }
}

extension PhoneNumber {
    /// A number already normalized and stored (from an event or a projection).
    public init(e164: String, region: String) {
        self.e164 = e164
        self.region = region
    }

    /// The region used for an international number sent without one: among the regions
    /// whose dial code starts it and whose length rules accept it, the main region of a
    /// shared dial code (+1 → US, +7 → RU, +44 → GB, …), else the first by ISO code.
    public init?(international raw: String, catalog: CountryCatalog) {
        let digits = raw.filter { !" -.()\u{00A0}".contains($0) }
        guard digits.hasPrefix("+") || digits.hasPrefix("00") else { return nil }
        let international = "+" + digits.drop { $0 == "+" }.dropFirst(digits.hasPrefix("00") ? 2 : 0)
        let candidates = catalog.countries(dialing: international)
            .compactMap { country in PhoneNumber(raw, country: country).map { (country, $0) } }
            .sorted { lhs, rhs in
                let lhsMain = Self.mainRegions.contains(lhs.0.iso)
                let rhsMain = Self.mainRegions.contains(rhs.0.iso)
                // A longer dial code is the more specific match (+1 264 Anguilla before +1 US).
                if lhs.0.dialCode.count != rhs.0.dialCode.count { return lhs.0.dialCode.count > rhs.0.dialCode.count }
                if lhsMain != rhsMain { return lhsMain }
                return lhs.0.iso < rhs.0.iso
            }
        guard let best = candidates.first?.1 else { return nil }
        self = best
    }

    static let mainRegions: Set<String> = ["US", "RU", "GB", "AU", "FI", "GP", "CW", "MA", "IT", "NO", "RE", "SH"]
}
