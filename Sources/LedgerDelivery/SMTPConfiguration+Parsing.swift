import Foundation

extension SMTPConfiguration {
    /// Reads `LEDGER_SMTP_URL` (`url`) and `LEDGER_SMTP_CA_FILE` (`caFile`, nil or empty when
    /// unset).
    ///
    /// The user and password are percent-decoded. The userinfo runs to the URL's last `@`, so
    /// a password with an unencoded `/`, `?`, `#` or `@` is still read as a password rather than
    /// as a host or a path. Every error names the variable and never quotes the password (nor
    /// the userinfo at all).
    public static func parse(url: String, caFile: String? = nil) throws -> SMTPConfiguration {
        let text = url.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw SMTPConfigurationError("LEDGER_SMTP_URL must be one URL without spaces or control characters")
        }
        let security: Security
        let rest: Substring
        if text.lowercased().hasPrefix("smtp://") {
            security = .startTLS
            rest = text.dropFirst("smtp://".count)
        } else if text.lowercased().hasPrefix("smtps://") {
            security = .implicitTLS
            rest = text.dropFirst("smtps://".count)
        } else {
            throw SMTPConfigurationError(
                "LEDGER_SMTP_URL must start with smtp:// (STARTTLS, usually port 587) or smtps:// (implicit TLS, usually port 465)")
        }

        var username: String?
        var password: String?
        var location = rest
        if let at = rest.lastIndex(of: "@") {
            (username, password) = try credentials(rest[..<at])
            location = rest[rest.index(after: at)...]
        }

        var query: Substring = ""
        if let mark = location.firstIndex(of: "?") {
            query = location[location.index(after: mark)...]
            location = location[..<mark]
        }
        guard !location.contains("#") else { throw SMTPConfigurationError("LEDGER_SMTP_URL must not have a fragment (#…)") }
        if let slash = location.firstIndex(of: "/") {
            guard location[slash...] == "/" else { throw SMTPConfigurationError("LEDGER_SMTP_URL must not have a path") }
            location = location[..<slash]
        }
        let (host, port) = try hostAndPort(location, defaultPort: security == .implicitTLS ? 465 : 587)

        var configuration = SMTPConfiguration(host: host, port: port, security: security, username: username, password: password)
        for parameter in query.split(separator: "&", omittingEmptySubsequences: true) {
            let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2, pair[0] == "tls", pair[1] == "none" else {
                throw SMTPConfigurationError("LEDGER_SMTP_URL: the only query parameter is tls=none")
            }
            guard security == .startTLS else {
                throw SMTPConfigurationError("LEDGER_SMTP_URL: tls=none contradicts smtps://; use smtp://")
            }
            configuration.security = .none
        }
        if configuration.security == .none {
            guard configuration.isLoopback else {
                throw SMTPConfigurationError(
                    "LEDGER_SMTP_URL: tls=none is accepted only for a loopback host (127.0.0.1, ::1, localhost), not \(host)")
            }
            guard username == nil else {
                throw SMTPConfigurationError("LEDGER_SMTP_URL: credentials go only over TLS; remove them or tls=none")
            }
        }

        if let caFile = caFile?.trimmingCharacters(in: .whitespacesAndNewlines), !caFile.isEmpty {
            guard configuration.security != .none else {
                throw SMTPConfigurationError("LEDGER_SMTP_CA_FILE is set but LEDGER_SMTP_URL has tls=none: no certificate is checked")
            }
            try checkCAFile(caFile)
            configuration.caFile = caFile
        }
        return configuration
    }

    /// `user:password`, percent-decoded; both or neither.
    private static func credentials(_ userinfo: Substring) throws -> (String, String) {
        guard let colon = userinfo.firstIndex(of: ":") else {
            throw SMTPConfigurationError("LEDGER_SMTP_URL has a user but no password (smtp://user:password@host)")
        }
        guard let user = userinfo[..<colon].removingPercentEncoding,
            let password = userinfo[userinfo.index(after: colon)...].removingPercentEncoding
        else {
            throw SMTPConfigurationError("LEDGER_SMTP_URL: the user or password has an invalid %-escape (a % must be written %25)")
        }
        guard !user.isEmpty, !password.isEmpty else {
            throw SMTPConfigurationError("LEDGER_SMTP_URL: the user and the password must both be non-empty")
        }
        // They travel inside AUTH lines (LOGIN sends them as they are, base64-encoded).
        guard !(user + password).unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw SMTPConfigurationError("LEDGER_SMTP_URL: the user or password contains a control character")
        }
        return (user, password)
    }

    /// `host`, `host:port`, `[v6]` or `[v6]:port`.
    private static func hostAndPort(_ location: Substring, defaultPort: Int) throws -> (String, Int) {
        var host = location
        var portText: Substring?
        if location.hasPrefix("[") {
            guard let close = location.firstIndex(of: "]") else {
                throw SMTPConfigurationError("LEDGER_SMTP_URL: an IPv6 host must be written [address]")
            }
            host = location[location.index(after: location.startIndex)..<close]
            let after = location[location.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw SMTPConfigurationError("LEDGER_SMTP_URL: expected :port after the host") }
                portText = after.dropFirst()
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw SMTPConfigurationError("LEDGER_SMTP_URL: the host is not an IPv6 address")
            }
        } else {
            if let colon = location.lastIndex(of: ":") {
                host = location[..<colon]
                portText = location[location.index(after: colon)...]
            }
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
            guard !host.isEmpty, host.allSatisfy({ allowed.contains($0) }), !host.hasPrefix("-"), !host.hasPrefix(".") else {
                throw SMTPConfigurationError("LEDGER_SMTP_URL: the host must be a DNS name or an IP address")
            }
        }
        var port = defaultPort
        if let portText {
            guard portText.count <= 5, portText.allSatisfy({ ("0"..."9").contains($0) }), let number = Int(portText),
                (1...65535).contains(number)
            else {
                throw SMTPConfigurationError("LEDGER_SMTP_URL: the port must be a number from 1 to 65535")
            }
            port = number
        }
        return (host.lowercased(), port)
    }

    /// The CA file must be a PEM with at least one certificate; libcurl would otherwise only
    /// fail at the first send.
    private static func checkCAFile(_ path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SMTPConfigurationError("LEDGER_SMTP_CA_FILE: cannot read \(path)")
        }
        guard let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") else {
            throw SMTPConfigurationError("LEDGER_SMTP_CA_FILE: \(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
    }
}
