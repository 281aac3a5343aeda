import LedgerCore

extension RelyingParty {
    static let androidPrefix = "android:apk-key-hash:"

    /// `text` as a browser serializes an origin (scheme and host in lower case, the default port
    /// dropped), or an Android app's origin unchanged; nil for anything else (a path, a trailing
    /// slash, user info, another scheme, a non-ASCII host), which a configuration should refuse.
    public static func serializedOrigin(_ text: String) -> String? {
        if text.hasPrefix(androidPrefix) {
            let hash = String(text.dropFirst(androidPrefix.count))
            return !hash.isEmpty && Base64URL.decode(hash) != nil ? text : nil
        }
        guard let separator = text.range(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound].lowercased()
        let authority = text[separator.upperBound...]
        guard scheme == "https" || scheme == "http", !authority.isEmpty,
            authority.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && !"/?#@\\".unicodeScalars.contains($0) })
        else { return nil }

        let host: Substring
        var port: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                port = rest.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            port = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        // An empty host, or empty brackets, is no host.
        guard host.count > (host.hasPrefix("[") ? 2 : 0) else { return nil }
        var serialized = scheme + "://" + host.lowercased()
        if let port {
            guard !port.isEmpty, port.count <= 5, port.allSatisfy(\.isASCIIDigitCharacter), let number = Int(port), number <= 65535 else {
                return nil
            }
            let defaultPort = scheme == "https" ? 443 : 80
            if number != defaultPort { serialized += ":\(number)" }
        }
        return serialized
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
