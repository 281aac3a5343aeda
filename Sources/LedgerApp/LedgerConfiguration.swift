import Foundation
import LedgerAccounts
import LedgerCore
import LedgerIdentity
import LedgerServer

/// Everything the service reads from its environment (docs/configuration.md): the product's
/// rules as one `Policies` value (one row of `Policies.settings` per variable), and how this
/// instance runs. Flags of `ledger serve` override the environment.
public struct LedgerConfiguration: Sendable {
    public var databaseURL: String?
    /// A hot standby of `databaseURL` (PostgreSQL streaming replication) for the readers: the
    /// feed, the event stream, webhooks and the audit (`LEDGER_READ_DATABASE_URL`).
    public var readDatabaseURL: String?
    /// Seconds `readDatabaseURL` may be behind the primary and still be read; further behind,
    /// the readers read the primary until it catches up (`LEDGER_READ_MAX_LAG_SECONDS`).
    public var readMaxLagSeconds = 10
    /// How long after the primary was last seen the readers may keep a standby that lacks nothing
    /// the primary was seen with, when every server refuses or is a standby
    /// (`LEDGER_READ_FAILOVER_SECONDS`; 0: never past `readMaxLagSeconds`).
    public var readFailoverSeconds = 30
    public var host = "0.0.0.0"
    /// `serve --dev`, or no database URL: `applyDevelopmentDefaults` set what the environment did not.
    public var developmentMode = false
    /// Development mode's record of every message the log sink sent (`DevelopmentFiles.messages`).
    public var developmentMessagesPath: String?
    public var port = 8080
    /// Event loop threads of the HTTP server: they parse and write, the handlers run on Swift's
    /// executor; half the cores by default (see `HTTPEventLoops`).
    public var httpThreads = HTTPEventLoops.defaultThreads
    /// base64 of 32 bytes; generated in development when absent.
    public var masterKey: String?
    public var deliveryWebhookURL: String?
    public var deliveryWebhookSecret: String?
    /// Email out over SMTP (`LEDGER_SMTP_URL`, `LEDGER_SMTP_CA_FILE`), from `LEDGER_EMAIL_FROM`.
    public var smtpURL: String?
    public var smtpCAFile: String?
    public var emailFrom = "321Fit <no-reply@321.fit>"
    /// Texts out through Twilio's Messages API (`LEDGER_TWILIO_*`: all of SID, token and From, or none).
    public var twilio: Twilio?
    /// A folder whose templates replace the built-in ones, file by file (`LEDGER_TEMPLATES_DIR`).
    public var templatesDirectory: String?
    /// What the built-in templates show (`LEDGER_BRAND_NAME`, default `LEDGER_PRODUCT_NAME`;
    /// `LEDGER_BRAND_URL`; `LEDGER_BRAND_COLOR`).
    public var brandName = "321Fit"
    public var brandURL = "https://321.fit"
    public var brandColor = "#1d4ed8"
    /// How long an SMS or email is retried after it was written (`LEDGER_DELIVERY_RETRY_SECONDS`).
    public var deliveryRetrySeconds = 3600

    /// Twilio's account and sender.
    public struct Twilio: Sendable, Equatable {
        public var accountSID: String
        public var authToken: String
        /// A phone number, or a Messaging Service SID (`MG…`).
        public var from: String
        public var baseURL = "https://api.twilio.com"

        public init(accountSID: String, authToken: String, from: String, baseURL: String = "https://api.twilio.com") {
            self.accountSID = accountSID
            self.authToken = authToken
            self.from = from
            self.baseURL = baseURL
        }
    }

    /// Whether emails have a way out (SMTP, or the delivery webhook), and texts (Twilio, or the webhook).
    public var emailsHaveAWayOut: Bool { smtpURL != nil || deliveryWebhookURL != nil }
    public var textsHaveAWayOut: Bool { twilio != nil || deliveryWebhookURL != nil }
    /// The product's rules, `Policies.standard` unless a variable of `Policies.settings` (or
    /// `LEDGER_SMS_COUNTRIES`) says otherwise.
    public var policies = Policies.standard
    /// The CloudEvents `source` of the events (`LEDGER_EVENT_SOURCE`): a URI naming this ledger.
    public var eventSource = "urn:321fit:account-ledger"
    /// Whether subscription URLs may reach loopback, private, link-local and metadata addresses.
    public var webhookAllowPrivateNetworks = false
    /// How long rows kept for a while stay (our own addition; `LEDGER_*_RETENTION_SECONDS`).
    public var throttleRetentionSeconds = 86_400
    public var otpRetentionSeconds = 86_400
    public var outboxRetentionSeconds = 3_600
    public var emailLinkRetentionSeconds = 86_400
    public var trustedProxies: [String] = []
    /// Seconds between two passes of the purge and the retention sweep on the instance that
    /// runs them (`LEDGER_PURGE_INTERVAL_SECONDS`).
    public var purgeIntervalSeconds = 60
    /// Seconds within which another instance runs the purge once the one running it dies
    /// (`LEDGER_PURGE_TAKEOVER_SECONDS`): the others try for its lock twice as often.
    public var purgeTakeoverSeconds = 30
    public var appleJWKS = "https://appleid.apple.com/auth/keys"
    public var googleJWKS = "https://www.googleapis.com/oauth2/v3/certs"
    public var appleClientIDs: [String] = []
    public var googleClientIDs: [String] = []
    /// Apple's token and revoke endpoints, and the credentials of its client secret: the team,
    /// the key's id, and the path of its PEM (`.p8`) file. Without all three no code is
    /// exchanged and nothing is revoked at Apple.
    public var appleTokenURL = "https://appleid.apple.com/auth/token"
    public var appleRevokeURL = "https://appleid.apple.com/auth/revoke"
    public var appleTeamID: String?
    public var appleKeyID: String?
    public var applePrivateKeyPath: String?
    /// Google's token and revoke endpoints and the client secret of `googleClientIDs`.
    public var googleTokenURL = "https://oauth2.googleapis.com/token"
    public var googleRevokeURL = "https://oauth2.googleapis.com/revoke"
    public var googleClientSecret: String?
    /// Where email links point (`<base>/verify-email?token=…`).
    public var linkBaseURL = "https://321.fit"
    /// The link pages' app offer and the app-link documents (`LEDGER_APP_STORE_URL`,
    /// `LEDGER_PLAY_STORE_URL`, `LEDGER_IOS_APP_IDS`, `LEDGER_ANDROID_PACKAGE`,
    /// `LEDGER_ANDROID_CERT_SHA256`).
    public var apps = LinkPages.Apps()
    /// The app's name, shown by authenticator apps beside the account and on the link pages (`LEDGER_PRODUCT_NAME`).
    public var productName = "321Fit"
    /// Where "Contact support" writes to.
    public var supportEmail = "support@321.fit"
    /// Connections in the PostgreSQL pool.
    public var databaseMaxConnections = 16
    /// A port of its own for `/metrics` (`LEDGER_METRICS_PORT`); nil serves it on `port`.
    public var metricsPort: Int?
    /// Open `GET /events/stream` connections per API key and instance (`LEDGER_SSE_STREAMS_PER_KEY`).
    public var streamsPerKey = 8
    /// How often an open event stream checks its key is still live (not an environment
    /// variable: tests shorten it).
    public var streamKeyRecheckInterval: Duration = .seconds(30)
    /// Seconds a request waits for a pooled connection before `503` with `Retry-After`.
    public var databasePoolTimeoutSeconds = 5
    /// Requests that may wait for a pooled connection at once; the next is `503` at once.
    public var databaseMaxWaiters = 1024
    /// Requests per second one API key may make to one instance (a burst of twice that is
    /// allowed); 0 turns the limit off (our own addition: `LEDGER_API_KEY_RATE_LIMIT`).
    public var apiKeyRateLimit = 1000
    /// Passkeys' relying party, when set (`LedgerConfiguration+WebAuthn.swift` has the defaults).
    public var webAuthnRPID: String?
    public var webAuthnOrigins: [String]?
    public var webAuthnRPName: String?
    /// HTTPS served here (`LEDGER_TLS_CERT_FILE`, `LEDGER_TLS_KEY_FILE`); nil for plain HTTP.
    public var tls: TLSFiles?
    /// `LEDGER_CONSOLE_ORIGIN`, when set (`LedgerConfiguration+Console.swift` has the default).
    public var consoleOriginSetting: String?
    /// Access tokens' format and claims, when set (`LedgerConfiguration+AccessTokens.swift` has the defaults).
    public var accessTokenFormat: AccessTokenSettings.Format = .opaque
    public var tokenIssuer: String?
    public var tokenAudience = "321fit"
    public var tokenClientID = "321fit-app"
    /// How long a new signing key is published before it signs (`LEDGER_SIGNING_KEY_ACTIVATION_SECONDS`).
    public var signingKeyActivationSeconds = 600

    public init() {}

    static let day = Policies.day

    /// Settings that work but are unsafe outside tests; `serve` logs each at start.
    public var warnings: [String] {
        var warnings: [String] = []
        if policies.scryptLogN < 15 {
            warnings.append(
                "LEDGER_SCRYPT_LOG_N=\(policies.scryptLogN) is below 15: password hashes are cheap to guess (tests only; 17 is the default)"
            )
        }
        if webhookAllowPrivateNetworks, !developmentMode {
            warnings.append("LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS is on: subscriptions may reach loopback and internal addresses")
        }
        if !linkBaseURL.hasPrefix("https://"), !(developmentMode && Self.isPrivateToHost(linkBaseURL)) {
            warnings.append("LEDGER_LINK_BASE_URL is not https: email links carry their tokens in the clear")
        }
        if let path = URL(string: linkBaseURL)?.path, !path.isEmpty, path != "/" {
            warnings.append("LEDGER_LINK_BASE_URL has a path (\(path)): the link pages and the app-link documents are served at the root")
        }
        if !appleClientIDs.isEmpty, applePrivateKeyPath == nil, !developmentMode {
            warnings.append(
                "Sign in with Apple is on but LEDGER_APPLE_PRIVATE_KEY is not set: authorization codes are ignored and no token "
                    + "is revoked at Apple on disconnect or deletion")
        }
        if !googleClientIDs.isEmpty, googleClientSecret == nil, !developmentMode {
            warnings.append(
                "Sign in with Google is on but LEDGER_GOOGLE_CLIENT_SECRET is not set: authorization codes are ignored and no "
                    + "token is revoked at Google on disconnect or deletion")
        }
        for (name, url) in providerEndpoints where !url.hasPrefix("https://") {
            warnings.append("\(name) is not https: client secrets and refresh tokens would cross the network in the clear")
        }
        if let twilio, !Self.isPrivateToHost(twilio.baseURL) {
            warnings.append("LEDGER_TWILIO_BASE_URL is not https: the auth token and every code would cross the network in the clear")
        }
        if let webhook = deliveryWebhookURL, !Self.isPrivateToHost(webhook) {
            warnings.append("LEDGER_DELIVERY_WEBHOOK_URL is not https: every code and link would cross the network in the clear")
        }
        if let webAuthnWarning { warnings.append(webAuthnWarning) }
        return warnings
    }

    /// The providers' token and revocation endpoints, by variable: client secrets and refresh
    /// tokens cross them.
    public var providerEndpoints: [(name: String, url: String)] {
        [
            ("LEDGER_APPLE_TOKEN_URL", appleTokenURL), ("LEDGER_APPLE_REVOKE_URL", appleRevokeURL),
            ("LEDGER_GOOGLE_TOKEN_URL", googleTokenURL), ("LEDGER_GOOGLE_REVOKE_URL", googleRevokeURL),
        ]
    }

    /// Whether what is sent to `url` stays off the network's wire in the clear: https, or http
    /// to this host's loopback (`localhost`, 127.0.0.0/8, `::1`).
    public static func isPrivateToHost(_ url: String) -> Bool {
        if url.hasPrefix("https://") { return true }
        guard url.hasPrefix("http://"), let host = URL(string: url)?.host?.lowercased() else { return false }
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return bare == "localhost" || Self.loopback.contains { $0.contains(bare) }
    }

    static let loopback = ["127.0.0.0/8", "::1"].compactMap(CIDR.init)

    /// The largest any setting may be: ten years, in seconds or in counts.
    static let longestSetting = Policies.longestSetting

    /// Reads the variables of docs/configuration.md; a malformed number is an error naming the variable.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> LedgerConfiguration
    {
        var configuration = LedgerConfiguration()
        func string(_ name: String) -> String? {
            guard let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            return value
        }
        // Every number has a ceiling: a lifetime of years would make a grant a password, and
        // a count or time past what PostgreSQL's intervals hold would fail every request.
        func integer(_ name: String, _ target: inout Int, minimum: Int = 0, maximum: Int = Self.longestSetting) throws {
            guard let text = string(name) else { return }
            target = try wholeNumber(name, text, in: minimum...maximum)
        }
        func list(_ name: String) -> [String]? {
            string(name).map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
        }
        configuration.databaseURL = string("DATABASE_URL")
        configuration.readDatabaseURL = string("LEDGER_READ_DATABASE_URL")
        // At most an hour: a standby further behind bounds nothing a purge needs, and the
        // lag monitor keeps a sample a second for that long.
        try integer("LEDGER_READ_MAX_LAG_SECONDS", &configuration.readMaxLagSeconds, minimum: 1, maximum: 3600)
        try integer("LEDGER_READ_FAILOVER_SECONDS", &configuration.readFailoverSeconds, minimum: 0, maximum: 600)
        try integer("LEDGER_PORT", &configuration.port, minimum: 0, maximum: 65_535)
        try integer("LEDGER_HTTP_THREADS", &configuration.httpThreads, minimum: 1, maximum: 256)
        configuration.masterKey = string("LEDGER_MASTER_KEY")
        configuration.deliveryWebhookURL = string("LEDGER_DELIVERY_WEBHOOK_URL")
        configuration.deliveryWebhookSecret = string("LEDGER_DELIVERY_WEBHOOK_SECRET")
        for setting in Policies.settings {
            try setting.read(string, into: &configuration.policies)
        }
        if let countries = list("LEDGER_SMS_COUNTRIES") {
            let codes = Set(countries.map { $0.uppercased() })
            let unknown = codes.filter { CountryCatalog.standard.country(iso: $0) == nil }.sorted()
            guard unknown.isEmpty, !codes.isEmpty else {
                throw ConfigurationError(
                    "LEDGER_SMS_COUNTRIES must list ISO 3166 codes of the picker's countries (GE,AM,…); unknown: '\(unknown.joined(separator: ","))'"
                )
            }
            configuration.policies.otp.allowedRegions = codes
        }
        // Never shorter than what the limits read: a day of throttle windows, a day of wrong codes.
        try integer("LEDGER_THROTTLE_RETENTION_SECONDS", &configuration.throttleRetentionSeconds, minimum: Self.day)
        try integer("LEDGER_OTP_RETENTION_SECONDS", &configuration.otpRetentionSeconds, minimum: Self.day)
        try integer("LEDGER_OUTBOX_RETENTION_SECONDS", &configuration.outboxRetentionSeconds)
        try integer("LEDGER_EMAIL_LINK_RETENTION_SECONDS", &configuration.emailLinkRetentionSeconds)
        guard TimeInterval(configuration.otpRetentionSeconds) >= configuration.policies.otp.resendWindow else {
            throw ConfigurationError(
                "LEDGER_OTP_RETENTION_SECONDS (\(configuration.otpRetentionSeconds)) must be at least LEDGER_OTP_RESEND_WINDOW_SECONDS "
                    + "(\(Int(configuration.policies.otp.resendWindow))): the resend limit reads the requests of that window")
        }
        if let text = string("LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS") {
            switch text.lowercased() {
            case "true", "1", "yes", "on": configuration.webhookAllowPrivateNetworks = true
            case "false", "0", "no", "off": configuration.webhookAllowPrivateNetworks = false
            default: throw ConfigurationError("LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS must be true or false, got '\(text)'")
            }
        }
        if let source = string("LEDGER_EVENT_SOURCE") {
            guard source.count <= 2000, !source.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 } == true }) else {
                throw ConfigurationError("LEDGER_EVENT_SOURCE must be a URI (no spaces, at most 2000 characters), got '\(source)'")
            }
            configuration.eventSource = source
        }
        configuration.trustedProxies = list("LEDGER_TRUSTED_PROXIES") ?? []
        for proxy in configuration.trustedProxies where CIDR(proxy) == nil {
            throw ConfigurationError("LEDGER_TRUSTED_PROXIES: '\(proxy)' is not an address or CIDR block")
        }
        // At most an hour between passes: a pass finds what became due since the last one, and a
        // purge promised within 30 days should not wait on the schedule. A takeover of at least
        // 2 s (the followers try every half of it) and at most an hour, for the same reason.
        try integer("LEDGER_PURGE_INTERVAL_SECONDS", &configuration.purgeIntervalSeconds, minimum: 1, maximum: 3600)
        try integer("LEDGER_PURGE_TAKEOVER_SECONDS", &configuration.purgeTakeoverSeconds, minimum: 2, maximum: 3600)
        configuration.appleJWKS = string("LEDGER_APPLE_JWKS") ?? configuration.appleJWKS
        configuration.googleJWKS = string("LEDGER_GOOGLE_JWKS") ?? configuration.googleJWKS
        configuration.appleClientIDs = list("LEDGER_APPLE_CLIENT_IDS") ?? []
        configuration.googleClientIDs = list("LEDGER_GOOGLE_CLIENT_IDS") ?? []
        for (name, target) in [
            ("LEDGER_APPLE_TOKEN_URL", \LedgerConfiguration.appleTokenURL), ("LEDGER_APPLE_REVOKE_URL", \.appleRevokeURL),
            ("LEDGER_GOOGLE_TOKEN_URL", \.googleTokenURL), ("LEDGER_GOOGLE_REVOKE_URL", \.googleRevokeURL),
        ] {
            guard let url = string(name) else { continue }
            guard url.hasPrefix("https://") || url.hasPrefix("http://"), URL(string: url)?.host != nil else {
                throw ConfigurationError("\(name) must be an http(s) URL, got '\(url)'")
            }
            configuration[keyPath: target] = url
        }
        configuration.appleTeamID = string("LEDGER_APPLE_TEAM_ID")
        configuration.appleKeyID = string("LEDGER_APPLE_KEY_ID")
        configuration.applePrivateKeyPath = string("LEDGER_APPLE_PRIVATE_KEY")
        let appleCredentials = [configuration.appleTeamID, configuration.appleKeyID, configuration.applePrivateKeyPath]
        guard appleCredentials.allSatisfy({ $0 == nil }) || appleCredentials.allSatisfy({ $0 != nil }) else {
            throw ConfigurationError(
                "LEDGER_APPLE_TEAM_ID, LEDGER_APPLE_KEY_ID and LEDGER_APPLE_PRIVATE_KEY go together: set all three or none")
        }
        configuration.googleClientSecret = string("LEDGER_GOOGLE_CLIENT_SECRET")
        try integer("LEDGER_API_KEY_RATE_LIMIT", &configuration.apiKeyRateLimit)
        try integer("LEDGER_DB_MAX_CONNECTIONS", &configuration.databaseMaxConnections, minimum: 1)
        if string("LEDGER_METRICS_PORT") != nil {
            var metricsPort = 0
            try integer("LEDGER_METRICS_PORT", &metricsPort, minimum: 1, maximum: 65_535)
            configuration.metricsPort = metricsPort
        }
        try integer("LEDGER_SSE_STREAMS_PER_KEY", &configuration.streamsPerKey, minimum: 1, maximum: 10_000)
        try integer("LEDGER_DB_POOL_TIMEOUT_SECONDS", &configuration.databasePoolTimeoutSeconds, minimum: 1, maximum: 300)
        try integer("LEDGER_DB_MAX_WAITERS", &configuration.databaseMaxWaiters, minimum: 0, maximum: 1_000_000)
        if let locale = string("LEDGER_DEFAULT_LOCALE") {
            guard let language = Language(rawValue: locale) else {
                throw ConfigurationError("LEDGER_DEFAULT_LOCALE must be ka, en or ru, got '\(locale)'")
            }
            configuration.policies.defaultLanguage = language
        }
        configuration.supportEmail = string("LEDGER_SUPPORT_EMAIL") ?? configuration.supportEmail
        configuration.productName = string("LEDGER_PRODUCT_NAME") ?? configuration.productName
        // After the product name: the brand the messages show defaults to it.
        try configuration.readDelivery(string: string, integer: integer)
        for (name, target) in [
            ("LEDGER_APP_STORE_URL", \LedgerConfiguration.apps.appStoreURL), ("LEDGER_PLAY_STORE_URL", \.apps.playStoreURL),
        ] {
            guard let url = string(name) else { continue }
            guard url.hasPrefix("https://"), URL(string: url)?.host != nil else {
                throw ConfigurationError("\(name) must be an https URL, got '\(url)'")
            }
            configuration[keyPath: target] = url
        }
        configuration.apps.iosAppIDs = list("LEDGER_IOS_APP_IDS") ?? []
        configuration.apps.androidPackage = string("LEDGER_ANDROID_PACKAGE")
        configuration.apps.androidCertificates = list("LEDGER_ANDROID_CERT_SHA256") ?? []
        configuration.linkBaseURL = string("LEDGER_LINK_BASE_URL") ?? configuration.linkBaseURL
        // After the link base and the Android app: the relying party defaults to them.
        try configuration.readWebAuthn(string: string, list: list)
        try configuration.readConsole(string: string)
        try configuration.readTLS(string: string)
        try configuration.readAccessTokens(string: string, integer: integer)
        return configuration
    }
}

/// `text` as a whole number in `range`, else the error naming `variable` that every number of the
/// configuration gives.
func wholeNumber(_ variable: String, _ text: String, in range: ClosedRange<Int>) throws -> Int {
    guard let value = Int(text), range.contains(value) else {
        throw ConfigurationError("\(variable) must be a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
    }
    return value
}
