import Foundation

/// Where and how email leaves: the relay of `LEDGER_SMTP_URL` and the trust of
/// `LEDGER_SMTP_CA_FILE`.
///
/// `smtp://user:pass@host:587` upgrades with STARTTLS and refuses to go on without it;
/// `smtps://user:pass@host:465` speaks TLS from the first byte; `smtp://127.0.0.1:2525?tls=none`
/// is plain text, for a loopback relay without credentials only (credentials go only over TLS).
/// The server's certificate must chain to the system's trust store, or to `caFile` when given,
/// and name the host: both are always checked.
public struct SMTPConfiguration: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// How the conversation is protected.
    public enum Security: String, Sendable, Equatable {
        /// `smtp://`: STARTTLS, required (libcurl's `CURLUSESSL_ALL`): no plain-text fallback.
        case startTLS
        /// `smtps://`: TLS from the first byte.
        case implicitTLS
        /// `smtp://…?tls=none`: plain text, loopback only and without credentials.
        case none
    }

    public var host: String
    public var port: Int
    public var security: Security
    /// AUTH PLAIN or LOGIN (whichever the relay offers) with these, when set.
    public var username: String?
    public var password: String?
    /// A PEM file of the CA (or self-signed certificate) the relay's certificate must chain to,
    /// instead of the system's trust store.
    public var caFile: String?
    /// At most this many connections to the relay at once (one easy handle each).
    public var maximumConnections: Int
    /// How long connecting (TCP and TLS) may take.
    public var connectTimeout: Duration
    /// How long one whole send (connect, AUTH, envelope, data) may take.
    public var sendTimeout: Duration

    public init(
        host: String, port: Int, security: Security, username: String? = nil, password: String? = nil, caFile: String? = nil,
        maximumConnections: Int = 4, connectTimeout: Duration = .seconds(10), sendTimeout: Duration = .seconds(30)
    ) {
        self.host = host
        self.port = port
        self.security = security
        self.username = username
        self.password = password
        self.caFile = caFile
        self.maximumConnections = maximumConnections
        self.connectTimeout = connectTimeout
        self.sendTimeout = sendTimeout
    }

    /// The relay without its password, for logs and messages.
    public var description: String {
        let scheme = security == .implicitTLS ? "smtps" : "smtp"
        let credentials = username.map { "\($0):***@" } ?? ""
        let query = security == .none ? "?tls=none" : ""
        return "\(scheme)://\(credentials)\(hostForURL):\(port)\(query)"
    }

    /// As `description`: `dump` and `String(reflecting:)` would otherwise show the password.
    public var debugDescription: String { description }

    /// The host as it goes in a URL: an IPv6 address in brackets.
    var hostForURL: String {
        host.contains(":") ? "[\(host)]" : host
    }

    /// Whether `host` is this machine: the only place plain text may go.
    var isLoopback: Bool {
        ["127.0.0.1", "::1", "localhost"].contains(host.lowercased())
    }

    /// The URL libcurl connects to; its path is the name the client gives in EHLO.
    func curlURL(heloName: String) -> String {
        "\(security == .implicitTLS ? "smtps" : "smtp")://\(hostForURL):\(port)/\(heloName)"
    }
}

/// `LEDGER_SMTP_URL` or `LEDGER_SMTP_CA_FILE` is not usable. The message names the variable and
/// never the password.
public struct SMTPConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
