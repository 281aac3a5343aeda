import Foundation

/// What the built-in templates show of the product (`LEDGER_BRAND_NAME`, `LEDGER_BRAND_URL`,
/// `LEDGER_BRAND_COLOR`), checked once at start: the colour goes into style attributes, where
/// HTML escaping does not help, and the URL into a link.
public struct MessageBrand: Sendable, Equatable {
    /// The product's name, as the messages call it ("321Fit").
    public let name: String
    /// Its home page, linked from every email's header.
    public let url: String
    /// The button colour, `#rrggbb`.
    public let color: String
    /// The text on a button: white or near-black, whichever reads better on `color` (a light
    /// brand colour under white text would fail WCAG's 4.5:1).
    public let buttonTextColor: String
    /// Brand-coloured text on white (the name, the links): `color` when it reads at 4.5:1,
    /// else a dark grey.
    public let textColor: String

    /// Why a brand setting was refused; names the variable.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public static let defaultName = "321Fit"
    public static let defaultURL = "https://321.fit"
    /// The link pages' blue (Sources/LedgerServer/Resources/pages/style.css): 6.7:1 on white.
    public static let defaultColor = "#1d4ed8"

    public init(name: String = defaultName, url: String = defaultURL, color: String = defaultColor) throws {
        let name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 40, !name.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) })
        else { throw Invalid(description: "LEDGER_BRAND_NAME must be 1 to 40 printable characters") }
        guard let parsed = URL(string: url), ["https", "http"].contains(parsed.scheme?.lowercased() ?? ""), parsed.host != nil else {
            throw Invalid(description: "LEDGER_BRAND_URL must be an http(s) URL, such as https://321.fit")
        }
        guard let rgb = Self.rgb(color) else {
            throw Invalid(description: "LEDGER_BRAND_COLOR must be a hex colour such as #1d4ed8")
        }
        self.name = name
        self.url = url
        self.color = "#" + rgb.map { String(format: "%02x", $0) }.joined()
        let white = Self.contrast(rgb, [255, 255, 255])
        let ink: [Int] = [0x11, 0x18, 0x27]
        buttonTextColor = white >= Self.contrast(rgb, ink) ? "#ffffff" : "#111827"
        textColor = white >= 4.5 ? self.color : "#1f2937"
    }

    /// `#rgb` or `#rrggbb` as three bytes.
    static func rgb(_ text: String) -> [Int]? {
        var hex = text.trimmingCharacters(in: .whitespaces)
        guard hex.hasPrefix("#") else { return nil }
        hex.removeFirst()
        guard hex.allSatisfy(\.isHexDigit), hex.count == 3 || hex.count == 6 else { return nil }
        if hex.count == 3 { hex = hex.map { "\($0)\($0)" }.joined() }
        return stride(from: 0, to: 6, by: 2).map { start in
            let from = hex.index(hex.startIndex, offsetBy: start)
            return Int(hex[from..<hex.index(from, offsetBy: 2)], radix: 16)!
        }
    }

    /// WCAG 2 contrast ratio of two sRGB colours (1 to 21).
    static func contrast(_ first: [Int], _ second: [Int]) -> Double {
        func luminance(_ rgb: [Int]) -> Double {
            let channels = rgb.map { value -> Double in
                let c = Double(value) / 255
                return c <= 0.039_28 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
            }
            return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]
        }
        let (a, b) = (luminance(first), luminance(second))
        return (max(a, b) + 0.05) / (min(a, b) + 0.05)
    }
}
