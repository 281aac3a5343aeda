import CLibPQ
import Foundation

/// Where a libpq connection string points, as libpq itself reads it (`PQconninfoParse`): its
/// hosts and `target_session_attrs`. What `serve` checks before it connects (a multi-host
/// `DATABASE_URL` that may land on a standby).
public struct ConnectionTarget: Sendable, Equatable {
    /// The hosts, in the order libpq tries them (one, unless the string lists several).
    public let hosts: [String]
    /// `target_session_attrs`: `any` unless the string says otherwise.
    public let sessionAttributes: String
    /// Whether the string sets `target_session_attrs` itself.
    public let setsSessionAttributes: Bool

    /// Nil when libpq cannot parse `url` (it will say why when connecting).
    public init?(url: String) {
        guard let options = PQconninfoParse(url, nil) else { return nil }
        defer { PQconninfoFree(options) }
        var values: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { values[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        hosts = (values["host"] ?? values["hostaddr"] ?? "").split(separator: ",").map(String.init)
        sessionAttributes = values["target_session_attrs"] ?? "any"
        setsSessionAttributes = values["target_session_attrs"] != nil
    }

    /// `url` asking libpq for a server that takes writes when it does not say what it wants:
    /// whatever the hosts come from (the string, `PGHOST`, a service file, a name with several
    /// addresses), a standby is then never settled on (docs/operations.md "High availability on
    /// Patroni"). A string that says otherwise is kept as it is.
    public static func requiringPrimary(_ url: String) -> String {
        guard let target = ConnectionTarget(url: url), !target.setsSessionAttributes else { return url }
        let isURI = url.hasPrefix("postgresql://") || url.hasPrefix("postgres://")
        if !isURI { return url + " target_session_attrs=read-write" }
        return url + (url.contains("?") ? "&" : "?") + "target_session_attrs=read-write"
    }

    /// Whether every server libpq may settle on takes writes: one host, or several with
    /// `read-write` or `primary` (a Patroni cluster's standbys answer too).
    public var settlesOnPrimary: Bool {
        hosts.count <= 1 || sessionAttributes == "read-write" || sessionAttributes == "primary"
    }
}
