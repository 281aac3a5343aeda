import Foundation

/// The readable name of the device a session signed in from, for the sessions screen and the
/// new sign-in alert: the app's own `X-Device-Name` when it sends one, else what the
/// `User-Agent` says ("iPhone · 321Fit 4.2", "Mac · Chrome 120"). Pure and small: a label is
/// shown to the account's owner, never trusted.
public enum DeviceLabel {
    /// What a sign-in that says nothing of its device is called.
    public static let unknown = "Unknown device"

    /// The longest label kept.
    public static let maximumLength = 64

    /// The label for a sign-in's headers; nil when neither says anything.
    public static func describe(deviceName: String?, userAgent: String?) -> String? {
        if let name = deviceName.map({ clean($0, upTo: maximumLength) }), !name.isEmpty { return name }
        // Read whole (a browser names itself late in the header), shown cut.
        guard let agent = userAgent.map({ clean($0, upTo: 1024) }), !agent.isEmpty else { return nil }
        let parts = [platform(agent), client(agent)].compactMap { $0 }
        return parts.isEmpty ? String(agent.prefix(maximumLength)) : parts.joined(separator: " · ")
    }

    /// What makes two labels one device for the new sign-in alert: the label without version
    /// numbers (words of digits and dots only), lower-cased: an app update is not a new device,
    /// but "321Fit" is a name.
    public static func key(_ label: String) -> String {
        label.lowercased().split(separator: " ").filter { !$0.allSatisfy { $0.isNumber || $0 == "." } }.joined(separator: " ")
    }

    /// Printable characters only, whitespace folded, at most `limit` of them. Format characters
    /// (bidi overrides, zero-width joiners) go entirely: in a new sign-in alert they would let a
    /// sender make "‮enohPi‬" read as a device the owner knows.
    static func clean(_ text: String, upTo limit: Int) -> String {
        let printable = text.prefix(4 * limit).unicodeScalars.map { scalar -> String in
            if scalar.properties.generalCategory == .format { return "" }
            return CharacterSet.controlCharacters.contains(scalar) ? " " : String(scalar)
        }
        .joined()
        return String(printable.split(whereSeparator: \.isWhitespace).joined(separator: " ").prefix(limit))
    }

    static func platform(_ agent: String) -> String? {
        let platforms: [(marker: String, name: String)] = [
            ("iPhone", "iPhone"), ("iPad", "iPad"), ("Android", "Android"), ("Macintosh", "Mac"), ("Mac OS X", "Mac"),
            ("Darwin", "iPhone"), ("Windows", "Windows"), ("CrOS", "ChromeOS"), ("Linux", "Linux"),
        ]
        return platforms.first { agent.contains($0.marker) }?.name
    }

    /// The app and its version (`321Fit/4.2 …` → "321Fit 4.2"), else the browser.
    static func client(_ agent: String) -> String? {
        let generic: Set<String> = ["Mozilla", "Dalvik", "okhttp", "CFNetwork", "Darwin", "AppleWebKit"]
        if let first = agent.split(separator: " ").first, let slash = first.firstIndex(of: "/") {
            let name = String(first[..<slash])
            let version = first[first.index(after: slash)...].prefix { $0.isNumber || $0 == "." }
            if !generic.contains(name), !name.isEmpty { return version.isEmpty ? name : "\(name) \(version)" }
        }
        let browsers: [(marker: String, name: String)] = [
            ("Edg/", "Edge"), ("OPR/", "Opera"), ("Firefox/", "Firefox"), ("Chrome/", "Chrome"), ("Version/", "Safari"),
        ]
        guard let browser = browsers.first(where: { agent.contains($0.marker) }) else { return nil }
        let after = agent.components(separatedBy: browser.marker).dropFirst().first ?? ""
        let major = after.prefix { $0.isNumber }
        return major.isEmpty ? browser.name : "\(browser.name) \(major)"
    }
}
