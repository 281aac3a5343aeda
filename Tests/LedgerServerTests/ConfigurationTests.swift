import Foundation
import LedgerApp
import LedgerIdentity
import LedgerServer
import LedgerTestSupport
import Synchronization
import Testing

@Suite("Configuration from the environment (docs/configuration.md)")
struct ConfigurationTests {
    @Test("an empty environment gives the documented defaults")
    func defaults() throws {
        let configuration = try LedgerConfiguration.fromEnvironment([:])
        #expect(configuration.databaseURL == nil && configuration.masterKey == nil)
        #expect(configuration.port == 8080)
        #expect(configuration.deliveryWebhookURL == nil && configuration.deliveryWebhookSecret == nil)
        // One home for the numbers: the configuration's policies are the product's.
        #expect(configuration.policies == Policies.standard)
        let policies = configuration.policies
        #expect(policies.otp.ttl == 300 && policies.otp.maxAttempts == 5)
        #expect(policies.otp.resendLimit == 3 && policies.otp.resendWindow == 900 && policies.otp.resendInterval == 30)
        #expect(policies.reauthGrantLifetime == 900)
        #expect(policies.otp.addressLimit == 30 && policies.ipLoginFailureLimit == 50)
        #expect(policies.otp.dailyFailureLimit == 20 && policies.mfaDailyFailureLimit == 20)
        #expect(policies.ipSignupLimit == 30 && policies.ipLookupLimit == 30)
        #expect(!configuration.webhookAllowPrivateNetworks && configuration.eventSource == "urn:321fit:account-ledger")
        #expect(configuration.metricsPort == nil && configuration.streamsPerKey == 8 && configuration.databasePoolTimeoutSeconds == 5)
        #expect(configuration.throttleRetentionSeconds == 86_400 && configuration.otpRetentionSeconds == 86_400)
        #expect(configuration.outboxRetentionSeconds == 3_600 && configuration.emailLinkRetentionSeconds == 86_400)
        #expect(configuration.trustedProxies.isEmpty)
        #expect(policies.emailLinkLifetime == 1800 && policies.emailRevertLifetime == 604_800)
        #expect(policies.linkResend == LinkResendPolicy(interval: 30, limit: 3, window: 900))
        #expect(policies.loginMaxFailures == 5 && policies.loginLockout == 900)
        #expect(policies.purgeDelay == 2_592_000 && policies.signupCooldown == 604_800)
        #expect(configuration.purgeIntervalSeconds == 60 && configuration.purgeTakeoverSeconds == 30)
        #expect(policies.scryptLogN == 17)
        #expect(configuration.readDatabaseURL == nil && configuration.readMaxLagSeconds == 10)
        #expect(configuration.appleJWKS == "https://appleid.apple.com/auth/keys")
        #expect(configuration.googleJWKS == "https://www.googleapis.com/oauth2/v3/certs")
        #expect(configuration.appleClientIDs.isEmpty && configuration.googleClientIDs.isEmpty)
    }

    @Test("every variable is read; blank ones count as unset")
    func overrides() throws {
        let configuration = try LedgerConfiguration.fromEnvironment([
            "DATABASE_URL": "postgresql://db/ledger", "LEDGER_PORT": "9090", "LEDGER_MASTER_KEY": " ",
            "LEDGER_DELIVERY_WEBHOOK_URL": "http://sms/bridge", "LEDGER_DELIVERY_WEBHOOK_SECRET": "s3",
            "LEDGER_OTP_TTL_SECONDS": "120", "LEDGER_OTP_MAX_ATTEMPTS": "3", "LEDGER_OTP_RESEND_LIMIT": "2",
            "LEDGER_OTP_RESEND_WINDOW_SECONDS": "600", "LEDGER_OTP_RESEND_INTERVAL_SECONDS": "10", "LEDGER_REAUTH_TTL_SECONDS": "300",
            "LEDGER_IP_OTP_LIMIT": "7", "LEDGER_IP_LOGIN_FAILURE_LIMIT": "8", "LEDGER_OTP_DAILY_FAILURE_LIMIT": "9",
            "LEDGER_MFA_DAILY_FAILURE_LIMIT": "13",
            "LEDGER_IP_SIGNUP_LIMIT": "11", "LEDGER_IP_LOOKUP_LIMIT": "12", "LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true",
            "LEDGER_EVENT_SOURCE": "https://ledger.321.fit/events",
            "LEDGER_METRICS_PORT": "9464", "LEDGER_SSE_STREAMS_PER_KEY": "3", "LEDGER_DB_POOL_TIMEOUT_SECONDS": "2",
            "LEDGER_THROTTLE_RETENTION_SECONDS": "90000", "LEDGER_OTP_RETENTION_SECONDS": "172800",
            "LEDGER_OUTBOX_RETENTION_SECONDS": "0", "LEDGER_EMAIL_LINK_RETENTION_SECONDS": "60",
            "LEDGER_TRUSTED_PROXIES": "10.0.0.0/8, 127.0.0.1",
            "LEDGER_EMAIL_LINK_TTL_SECONDS": "60", "LEDGER_EMAIL_REVERT_TTL_SECONDS": "3600", "LEDGER_LOGIN_MAX_FAILURES": "4",
            "LEDGER_LOGIN_LOCKOUT_SECONDS": "100", "LEDGER_PURGE_AFTER_SECONDS": "0", "LEDGER_SIGNUP_COOLDOWN_SECONDS": "86400",
            "LEDGER_SCRYPT_LOG_N": "10", "LEDGER_APPLE_JWKS": "/etc/apple.json", "LEDGER_GOOGLE_JWKS": "/etc/google.json",
            "LEDGER_APPLE_CLIENT_IDS": "fit.321.app, fit.321.web", "LEDGER_GOOGLE_CLIENT_IDS": "g-client",
            "LEDGER_READ_DATABASE_URL": "postgresql://standby/ledger", "LEDGER_READ_MAX_LAG_SECONDS": "3",
            "LEDGER_PURGE_INTERVAL_SECONDS": "1", "LEDGER_PURGE_TAKEOVER_SECONDS": "2", "LEDGER_HTTP_THREADS": "3",
            "LEDGER_DB_MAX_WAITERS": "40",
        ])
        #expect(configuration.databaseURL == "postgresql://db/ledger" && configuration.port == 9090)
        #expect(configuration.masterKey == nil)
        #expect(configuration.deliveryWebhookURL == "http://sms/bridge" && configuration.deliveryWebhookSecret == "s3")
        let policies = configuration.policies
        #expect(policies.otp.ttl == 120 && policies.otp.maxAttempts == 3)
        #expect(policies.otp.resendLimit == 2 && policies.otp.resendWindow == 600)
        #expect(policies.otp.resendInterval == 10 && policies.reauthGrantLifetime == 300)
        #expect(policies.otp.addressLimit == 7 && policies.ipLoginFailureLimit == 8)
        #expect(policies.otp.dailyFailureLimit == 9 && policies.mfaDailyFailureLimit == 13)
        #expect(policies.ipSignupLimit == 11 && policies.ipLookupLimit == 12)
        #expect(configuration.webhookAllowPrivateNetworks && configuration.eventSource == "https://ledger.321.fit/events")
        #expect(configuration.metricsPort == 9464 && configuration.streamsPerKey == 3 && configuration.databasePoolTimeoutSeconds == 2)
        #expect(configuration.throttleRetentionSeconds == 90_000 && configuration.otpRetentionSeconds == 172_800)
        #expect(configuration.outboxRetentionSeconds == 0 && configuration.emailLinkRetentionSeconds == 60)
        #expect(configuration.trustedProxies == ["10.0.0.0/8", "127.0.0.1"])
        #expect(policies.emailLinkLifetime == 60 && policies.emailRevertLifetime == 3600)
        #expect(policies.loginMaxFailures == 4 && policies.loginLockout == 100)
        #expect(policies.purgeDelay == 0 && policies.signupCooldown == 86400)
        #expect(configuration.purgeIntervalSeconds == 1 && configuration.purgeTakeoverSeconds == 2)
        #expect(policies.scryptLogN == 10)
        #expect(configuration.appleJWKS == "/etc/apple.json" && configuration.googleJWKS == "/etc/google.json")
        #expect(configuration.appleClientIDs == ["fit.321.app", "fit.321.web"] && configuration.googleClientIDs == ["g-client"])
        #expect(configuration.readDatabaseURL == "postgresql://standby/ledger" && configuration.readMaxLagSeconds == 3)
    }

    @Test("every policy setting is read into its own number, and refused outside its range naming itself")
    func policySettings() throws {
        for setting in Policies.settings {
            // A value in range that differs from the product's (the bounds, or one past the default).
            let standard = setting.value(in: .standard)
            let value = standard == setting.range.upperBound ? setting.range.lowerBound : standard + 1
            var environment = [setting.variable: String(value)]
            if setting.variable == "LEDGER_OTP_RESEND_WINDOW_SECONDS" { environment["LEDGER_OTP_RETENTION_SECONDS"] = "172800" }
            let configuration = try LedgerConfiguration.fromEnvironment(environment)
            #expect(setting.value(in: configuration.policies) == value, "\(setting.variable)")
            // Its own number only (and the links' that still follow a code's variable).
            var others = configuration.policies
            for reset in Policies.settings where reset.variable == setting.variable || reset.fallback == setting.variable {
                reset.set(reset.value(in: .standard), in: &others)
            }
            #expect(others == Policies.standard, "\(setting.variable) changed more than its own number")
            for outside in [setting.range.lowerBound - 1, setting.range.upperBound + 1] {
                let error = #expect(throws: ConfigurationError.self) {
                    try LedgerConfiguration.fromEnvironment([setting.variable: String(outside)])
                }
                #expect(error?.message.contains(setting.variable) == true, "\(setting.variable)=\(outside)")
            }
        }
        #expect(Set(Policies.settings.map(\.variable)).count == Policies.settings.count)
    }

    @Test("the links' countdown and limit: their own variables, else the codes' (configurations written before them)")
    func linkResend() throws {
        let own = try LedgerConfiguration.fromEnvironment([
            "LEDGER_LINK_RESEND_INTERVAL_SECONDS": "5", "LEDGER_LINK_RESEND_LIMIT": "7", "LEDGER_LINK_RESEND_WINDOW_SECONDS": "600",
            "LEDGER_OTP_RESEND_INTERVAL_SECONDS": "0",
        ])
        #expect(own.policies.linkResend == LinkResendPolicy(interval: 5, limit: 7, window: 600))
        #expect(own.policies.otp.resendInterval == 0)
        let inherited = try LedgerConfiguration.fromEnvironment([
            "LEDGER_OTP_RESEND_INTERVAL_SECONDS": "0", "LEDGER_OTP_RESEND_LIMIT": "500", "LEDGER_OTP_RESEND_WINDOW_SECONDS": "172800",
            "LEDGER_OTP_RETENTION_SECONDS": "172800",
        ])
        #expect(inherited.policies.linkResend == LinkResendPolicy(interval: 0, limit: 100, window: 86_400))
        for (name, value) in [
            ("LEDGER_LINK_RESEND_WINDOW_SECONDS", "0"), ("LEDGER_LINK_RESEND_WINDOW_SECONDS", "86401"),
            ("LEDGER_LINK_RESEND_LIMIT", "-1"), ("LEDGER_LINK_RESEND_INTERVAL_SECONDS", "soon"),
        ] {
            #expect(throws: ConfigurationError.self) { try LedgerConfiguration.fromEnvironment([name: value]) }
        }
    }

    @Test("the ways out: SMTP, Twilio (all three or none), templates, brand, retries")
    func delivery() throws {
        let plain = try LedgerConfiguration.fromEnvironment([:])
        #expect(!plain.emailsHaveAWayOut && !plain.textsHaveAWayOut && plain.deliveryRetrySeconds == 3600)
        #expect(plain.emailFrom == "321Fit <no-reply@321.fit>" && plain.brandName == "321Fit")
        let relays = try LedgerConfiguration.fromEnvironment([
            "LEDGER_SMTP_URL": "smtps://mail.example.net:465", "LEDGER_TWILIO_ACCOUNT_SID": "AC1", "LEDGER_TWILIO_AUTH_TOKEN": "t",
            "LEDGER_TWILIO_FROM": "MG2", "LEDGER_DELIVERY_RETRY_SECONDS": "600", "LEDGER_BRAND_COLOR": "#123",
        ])
        #expect(relays.emailsHaveAWayOut && relays.textsHaveAWayOut && relays.deliveryRetrySeconds == 600)
        #expect(relays.twilio == .init(accountSID: "AC1", authToken: "t", from: "MG2"))
        let webhook = try LedgerConfiguration.fromEnvironment(["LEDGER_DELIVERY_WEBHOOK_URL": "https://bridge.example.net/d"])
        #expect(webhook.emailsHaveAWayOut && webhook.textsHaveAWayOut)
        for (name, environment) in [
            ("LEDGER_TWILIO_AUTH_TOKEN", ["LEDGER_TWILIO_ACCOUNT_SID": "AC1"]), ("LEDGER_BRAND_COLOR", ["LEDGER_BRAND_COLOR": "red"]),
            ("LEDGER_DELIVERY_RETRY_SECONDS", ["LEDGER_DELIVERY_RETRY_SECONDS": "0"]),
            ("LEDGER_TEMPLATES_DIR", ["LEDGER_TEMPLATES_DIR": "/nonexistent/templates"]),
            ("LEDGER_SMTP_CA_FILE", ["LEDGER_SMTP_CA_FILE": "/nonexistent/ca.pem"]),
            ("LEDGER_EMAIL_FROM", ["LEDGER_EMAIL_FROM": "no address"]),
        ] {
            let error = #expect(throws: ConfigurationError.self) { try LedgerConfiguration.fromEnvironment(environment) }
            #expect(error?.message.contains(name) == true, "\(environment): \(error?.message ?? "no error")")
        }
    }

    @Test("a value that cannot be used is an error naming its variable")
    func malformed() {
        for (name, value) in [
            ("LEDGER_OTP_TTL_SECONDS", "five"), ("LEDGER_OTP_MAX_ATTEMPTS", "0"), ("LEDGER_PORT", "-1"),
            ("LEDGER_TRUSTED_PROXIES", "10.0.0.0/99"), ("LEDGER_SCRYPT_LOG_N", "30"),
            // Ceilings: a grant that lasts years is a password; a lockout past PostgreSQL's
            // intervals would fail every sign-in.
            ("LEDGER_REAUTH_TTL_SECONDS", "31536000"), ("LEDGER_LOGIN_LOCKOUT_SECONDS", "9223372036854775807"),
            ("LEDGER_OTP_TTL_SECONDS", "86401"), ("LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS", "maybe"),
            // A CloudEvents source is a URI: no spaces, no control characters (it is written into every event).
            ("LEDGER_EVENT_SOURCE", "urn:with spaces"), ("LEDGER_EVENT_SOURCE", "urn:a\u{1}b"),
            // Shorter than the windows the limits read (a day) would defeat them.
            ("LEDGER_OTP_RETENTION_SECONDS", "3600"), ("LEDGER_THROTTLE_RETENTION_SECONDS", "60"), ("LEDGER_PORT", "65536"),
            ("LEDGER_PURGE_AFTER_SECONDS", "999999999999"),
            // A day's cap below one challenge's attempts locks the owner out on a typo.
            ("LEDGER_MFA_DAILY_FAILURE_LIMIT", "4"),
            // It is the only cap on TOTP guesses at sign-in: not a thousand a day.
            ("LEDGER_MFA_DAILY_FAILURE_LIMIT", "101"),
            // A server with no event loop serves nothing; a queue cannot be negative.
            ("LEDGER_HTTP_THREADS", "0"), ("LEDGER_DB_MAX_WAITERS", "-1"),
            // The lag is measured to a second (a sample a second); an hour behind bounds nothing a purge needs.
            ("LEDGER_READ_MAX_LAG_SECONDS", "0"), ("LEDGER_READ_MAX_LAG_SECONDS", "3601"), ("LEDGER_READ_MAX_LAG_SECONDS", "2.5"),
            // A revert link holds its address from every other account as long: not for years.
            ("LEDGER_EMAIL_REVERT_TTL_SECONDS", "2592001"),
            // Whole seconds; a pass at least every hour; a takeover of 2 s to an hour (the others try every half of it).
            ("LEDGER_PURGE_INTERVAL_SECONDS", "0"), ("LEDGER_PURGE_INTERVAL_SECONDS", "3601"), ("LEDGER_PURGE_INTERVAL_SECONDS", "0.5"),
            ("LEDGER_PURGE_TAKEOVER_SECONDS", "1"), ("LEDGER_PURGE_TAKEOVER_SECONDS", "3601"), ("LEDGER_PURGE_TAKEOVER_SECONDS", "30s"),
        ] {
            let error = #expect(throws: ConfigurationError.self) { try LedgerConfiguration.fromEnvironment([name: value]) }
            #expect(error?.message.contains(name) == true, "\(name)=\(value): \(error?.message ?? "no error")")
        }
        // Retention shorter than the window a limit reads would quietly shorten the limit.
        let short = #expect(throws: ConfigurationError.self) {
            try LedgerConfiguration.fromEnvironment(["LEDGER_OTP_RESEND_WINDOW_SECONDS": "172800"])
        }
        #expect(short?.message.contains("LEDGER_OTP_RETENTION_SECONDS") == true)
    }

    @Test("unsafe settings are warned about at start: scrypt below 15, private webhook destinations, codes in the clear")
    func warnings() throws {
        #expect(try LedgerConfiguration.fromEnvironment([:]).warnings.isEmpty)
        #expect(try LedgerConfiguration.fromEnvironment(["LEDGER_SCRYPT_LOG_N": "15"]).warnings.isEmpty)
        let weak = try LedgerConfiguration.fromEnvironment(["LEDGER_SCRYPT_LOG_N": "14", "LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS": "1"])
        #expect(weak.warnings.count == 2)
        #expect(weak.warnings.first?.contains("LEDGER_SCRYPT_LOG_N=14 is below 15") == true)
        // Codes and the Twilio token in the clear over a network: said at start (a loopback relay is fine).
        let clear = try LedgerConfiguration.fromEnvironment([
            "LEDGER_TWILIO_ACCOUNT_SID": "AC1", "LEDGER_TWILIO_AUTH_TOKEN": "t", "LEDGER_TWILIO_FROM": "+15005550006",
            "LEDGER_TWILIO_BASE_URL": "http://sms.internal:8080", "LEDGER_DELIVERY_WEBHOOK_URL": "http://bridge.internal/deliveries",
        ])
        #expect(clear.warnings.count == 2)
        #expect(clear.warnings.contains { $0.hasPrefix("LEDGER_TWILIO_BASE_URL is not https") })
        #expect(clear.warnings.contains { $0.hasPrefix("LEDGER_DELIVERY_WEBHOOK_URL is not https") })
        let local = try LedgerConfiguration.fromEnvironment([
            "LEDGER_TWILIO_ACCOUNT_SID": "AC1", "LEDGER_TWILIO_AUTH_TOKEN": "t", "LEDGER_TWILIO_FROM": "+15005550006",
            "LEDGER_TWILIO_BASE_URL": "http://127.0.0.1:8080", "LEDGER_DELIVERY_WEBHOOK_URL": "http://[::1]:9/deliveries",
        ])
        #expect(local.warnings.isEmpty)
    }

    @Test("LEDGER_TLS_CERT_FILE and LEDGER_TLS_KEY_FILE go together; without them, outside development, serve says TLS must end in front")
    func tls() throws {
        let both = try LedgerConfiguration.fromEnvironment([
            "LEDGER_TLS_CERT_FILE": "/tls/fullchain.pem", "LEDGER_TLS_KEY_FILE": "/tls/privkey.pem",
        ])
        #expect(both.tls == .init(certificateFile: "/tls/fullchain.pem", keyFile: "/tls/privkey.pem") && both.tlsWarning == nil)
        for alone in ["LEDGER_TLS_CERT_FILE", "LEDGER_TLS_KEY_FILE"] {
            let refused = #expect(throws: ConfigurationError.self) { try LedgerConfiguration.fromEnvironment([alone: "/tls/x.pem"]) }
            #expect(refused?.message.contains("go together") == true)
        }
        var plain = try LedgerConfiguration.fromEnvironment([:])
        #expect(plain.tls == nil && plain.tlsWarning?.contains("TLS must end in front of this service") == true)
        plain.developmentMode = true
        #expect(plain.tlsWarning == nil)
    }

    @Test("a TLS certificate not valid now (expired, or not yet valid) is refused, at start and on reload, and the pair in use stays")
    func tlsValidity() throws {
        let pair = try TestCertificate.make(names: ["DNS:localhost"])
        let files = LedgerConfiguration.TLSFiles(certificateFile: pair.certificatePath, keyFile: pair.keyPath)
        let current = try TLSCertificates(files: files)
        #expect(current.pair.notAfter > Date())
        for moment in [Date().addingTimeInterval(-86_400), Date().addingTimeInterval(3 * 86_400)] {
            let refused = #expect(throws: ConfigurationError.self) { try TLSCertificates(files: files, now: { moment }) }
            #expect(refused?.message.contains("is not valid now") == true)
        }
        let clock = Mutex(Date())
        let reloading = try TLSCertificates(files: files, now: { clock.withLock { $0 } })
        clock.withLock { $0 = $0.addingTimeInterval(3 * 86_400) }
        #expect(throws: ConfigurationError.self) { try reloading.reload() }
        #expect(reloading.pair.notAfter == current.pair.notAfter)
    }

    @Test("what stays off the wire in the clear: https, or http to loopback")
    func privateToHost() {
        for url in [
            "https://oauth2.googleapis.com/token", "http://127.0.0.1:9/token", "http://127.8.0.1/x", "http://[::1]:80/x",
            "http://LOCALHOST:1/",
        ] {
            #expect(LedgerConfiguration.isPrivateToHost(url), "\(url)")
        }
        for url in [
            "http://oauth.example.com/token", "http://10.0.0.1/token", "http://[::2]/x", "http://127.0.0.1.example.com/",
            "ftp://127.0.0.1/",
        ] {
            #expect(!LedgerConfiguration.isPrivateToHost(url), "\(url)")
        }
    }

    @Test(
        "development mode: loopback only unless --host, links to itself, local webhooks, the development identity provider; the environment wins, and its own defaults are not warned about"
    )
    func developmentDefaults() throws {
        var bare = try LedgerConfiguration.fromEnvironment(["LEDGER_PORT": "8181"])
        bare.applyDevelopmentDefaults(host: nil, localCluster: true, environment: ["LEDGER_PORT": "8181"])
        #expect(bare.host == "127.0.0.1" && bare.linkBaseURL == "http://localhost:8181")
        #expect(bare.webhookAllowPrivateNetworks && bare.developmentMessagesPath == DevelopmentFiles.messages)
        #expect(bare.appleClientIDs == ["ledger-dev"] && bare.googleJWKS == DevelopmentFiles.identityKeySet)
        #expect(bare.warnings.isEmpty, "\(bare.warnings)")

        let environment = [
            "LEDGER_LINK_BASE_URL": "https://dev.321.fit", "LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS": "false",
            "LEDGER_GOOGLE_CLIENT_IDS": "web-client",
        ]
        var set = try LedgerConfiguration.fromEnvironment(environment)
        set.applyDevelopmentDefaults(host: "0.0.0.0", localCluster: true, environment: environment)
        #expect(set.host == "0.0.0.0" && set.linkBaseURL == "https://dev.321.fit" && !set.webhookAllowPrivateNetworks)
        #expect(set.appleClientIDs.isEmpty && set.googleClientIDs == ["web-client"] && set.googleJWKS != DevelopmentFiles.identityKeySet)
        // `--dev` on a database of one's own: loopback and the message file only; links, webhooks
        // and the providers stay as configured.
        var own = try LedgerConfiguration.fromEnvironment([:])
        own.applyDevelopmentDefaults(host: nil, localCluster: false, environment: [:])
        #expect(own.host == "127.0.0.1" && own.developmentMessagesPath == DevelopmentFiles.messages)
        #expect(own.linkBaseURL == "https://321.fit" && !own.webhookAllowPrivateNetworks && own.appleClientIDs.isEmpty)
        // No fallback to development mode from a blank DATABASE_URL or a deployment's settings.
        #expect(LedgerConfiguration.developmentFallbackRefusal(environment: [:], explicitDevelopment: false) == nil)
        #expect(
            LedgerConfiguration.developmentFallbackRefusal(environment: ["DATABASE_URL": " "], explicitDevelopment: true)?
                .hasPrefix("DATABASE_URL is set but empty") == true)
        let deployment = ["LEDGER_MASTER_KEY": "a2V5", "LEDGER_SMTP_URL": "smtps://mail.example.org"]
        #expect(
            LedgerConfiguration.developmentFallbackRefusal(environment: deployment, explicitDevelopment: false)?
                .contains("(LEDGER_MASTER_KEY, LEDGER_SMTP_URL)") == true)
        #expect(LedgerConfiguration.developmentFallbackRefusal(environment: deployment, explicitDevelopment: true) == nil)
        // Outside development mode an http link base is warned about, loopback or not.
        let plain = try LedgerConfiguration.fromEnvironment(["LEDGER_LINK_BASE_URL": "http://localhost:8181"])
        #expect(plain.warnings.contains { $0.hasPrefix("LEDGER_LINK_BASE_URL is not https") })
    }
}
