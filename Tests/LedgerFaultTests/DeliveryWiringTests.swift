import Foundation
import LedgerTestSupport
import Testing

/// `ledger serve` as shipped: texts through Twilio rendered from the templates, and templates
/// checked before the service takes a request.
@Suite("ledger serve: the ways messages leave", .timeLimit(.minutes(10)))
struct DeliveryWiringTests {
    /// Waits until `server` has had `count` requests (or 30 s).
    private func requests(_ server: FakeTwilioServer, count: Int) async throws -> [FakeTwilioServer.Received] {
        for _ in 0..<300 where server.requests.count < count { try await Task.sleep(for: .milliseconds(100)) }
        return server.requests
    }

    @Test("with LEDGER_TWILIO_* a sign-in code goes through Twilio in the brand's words, and the log never shows it")
    func twilio() async throws {
        try await TestPostgres.withDatabase { db in
            let twilio = FakeTwilioServer()
            try await twilio.serve {
                let server = try ServerUnderTest(
                    databaseURL: db.url,
                    environment: [
                        "LEDGER_DELIVERY_WEBHOOK_URL": "", "LEDGER_SMTP_URL": "smtp://127.0.0.1:9?tls=none",
                        "LEDGER_TWILIO_ACCOUNT_SID": "AC0123456789abcdef0123456789abcdef",
                        "LEDGER_TWILIO_AUTH_TOKEN": "twilio-secret-token",
                        "LEDGER_TWILIO_FROM": "+15005550006", "LEDGER_TWILIO_BASE_URL": twilio.baseURL, "LEDGER_BRAND_NAME": "Handz",
                        "LEDGER_OTP_TTL_SECONDS": "600", "LOG_LEVEL": "debug",
                    ])
                do {
                    try await server.start()
                    let asked = try await server.send(
                        "POST", "/auth/phone/request-otp", json: ["phone": "+995511200300", "purpose": "sign_in"])
                    #expect(asked.status == 202)
                    let sent = try #require(try await requests(twilio, count: 1).first)
                    #expect(sent.path == "/2010-04-01/Accounts/AC0123456789abcdef0123456789abcdef/Messages.json")
                    #expect(sent.fields["To"] == "+995511200300" && sent.fields["From"] == "+15005550006")
                    let text = try #require(sent.fields["Body"])
                    let code = String(text.drop { !$0.isNumber }.prefix { $0.isNumber })
                    #expect(code.count == 6 && text == "Handz code: \(code). It expires in 10 minutes.")
                    let expected = "Basic " + Data("AC0123456789abcdef0123456789abcdef:twilio-secret-token".utf8).base64EncodedString()
                    #expect(sent.authorization == expected)
                    try await server.shutdown()
                    let log = server.process?.output ?? ""
                    #expect(!log.contains(code) && !log.contains("twilio-secret-token"))
                    #expect(!log.contains("+995511200300"), "numbers are masked in the log")
                } catch {
                    try? await server.shutdown()
                    throw error
                }
            }
        }
    }

    @Test("with LEDGER_SMTP_URL a verification email goes over STARTTLS to the relay, rendered, and is counted as sent")
    func smtp() async throws {
        var options = SMTPTestServer.Options()
        let certificate = try TestCertificate.make(names: ["DNS:localhost"])
        options.certificate = certificate
        options.user = "relay-user"
        options.password = "relay pass/with@signs"
        let relay = try await SMTPTestServer.start(options)
        defer { relay.stop() }
        try await TestPostgres.withDatabase { db in
            let server = try ServerUnderTest(
                databaseURL: db.url,
                environment: [
                    "LEDGER_DELIVERY_WEBHOOK_URL": "", "LEDGER_TWILIO_ACCOUNT_SID": "AC1", "LEDGER_TWILIO_AUTH_TOKEN": "t",
                    "LEDGER_TWILIO_FROM": "+15005550006", "LEDGER_TWILIO_BASE_URL": "http://127.0.0.1:9",
                    "LEDGER_SMTP_URL": "smtp://relay-user:relay%20pass%2Fwith%40signs@localhost:\(relay.port)",
                    "LEDGER_SMTP_CA_FILE": certificate.certificatePath, "LEDGER_EMAIL_FROM": "Handz <hello@handz.app>",
                    "LEDGER_SUPPORT_EMAIL": "help@handz.app", "LEDGER_BRAND_NAME": "Handz", "LOG_LEVEL": "debug",
                ])
            do {
                try await server.start()
                _ = try await server.signUp(1)
                let received = try #require(try await relay.waitForMessages(1, timeout: .seconds(30)).first)
                #expect(received.tls == true && relay.authentications().count == 1)
                #expect(received.subject == "Verify your email for Handz")
                #expect(received.from == [.init(display_name: "Handz", address: "hello@handz.app")])
                #expect(received.reply_to == [.init(display_name: "", address: "help@handz.app")])
                #expect(received.content_type == "multipart/alternative")
                let text = try #require(received.parts?.first { $0.content_type == "text/plain" }?.content)
                let link = try #require(text.split(whereSeparator: \.isWhitespace).first { $0.contains("/verify-email?token=") })
                #expect(received.parts?.contains { $0.content_type == "text/html" && $0.content.contains(String(link)) } == true)

                var counted = ""
                for _ in 0..<100 {
                    counted = String(decoding: try await server.send("GET", "/metrics").body, as: UTF8.self)
                    if counted.contains(#"ledger_deliveries_total{channel="email",provider="smtp",outcome="sent"} 1"#) { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(counted.contains(#"ledger_deliveries_total{channel="email",provider="smtp",outcome="sent"} 1"#))
                try await server.shutdown()
                let log = server.process?.output ?? ""
                let token = String(link.split(separator: "=").last ?? "")
                #expect(!token.isEmpty && !log.contains(token))
                #expect(!log.contains("relay pass") && !log.contains("pass%2Fwith"))
            } catch {
                try? await server.shutdown()
                throw error
            }
        }
    }

    @Test("an SMTP URL that would send credentials in the clear off this host stops serve, naming the variable, not the password")
    func smtpInTheClear() async throws {
        try await TestPostgres.withDatabase { db in
            let server = try ServerUnderTest(
                databaseURL: db.url, environment: ["LEDGER_SMTP_URL": "smtp://relay-user:hunter2-secret@smtp.example.com:25?tls=none"])
            let (status, output) = try await server.ledger(["serve", "--host", "127.0.0.1"])
            try await server.shutdown()
            #expect(status != 0)
            #expect(output.contains("refusing to start") && output.contains("LEDGER_SMTP_URL"))
            #expect(!output.contains("hunter2-secret"))
        }
    }

    @Test("a template override that does not parse stops serve before it takes a request, naming the file")
    func brokenOverride() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("templates-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("{{#code}} unclosed".utf8).write(to: folder.appendingPathComponent("otp.ka.sms.mustache"))
        try await TestPostgres.withDatabase { db in
            let server = try ServerUnderTest(databaseURL: db.url, environment: ["LEDGER_TEMPLATES_DIR": folder.path])
            let (status, output) = try await server.ledger(["serve", "--host", "127.0.0.1"])
            try await server.shutdown()
            #expect(status != 0)
            #expect(output.contains("refusing to start") && output.contains("otp.ka.sms.mustache"))

            // The same folder fixed previews in Georgian, at the lifetime the service is set to.
            try Data("{{brand_name}}: {{code}} ({{code_expires_in}})".utf8).write(to: folder.appendingPathComponent("otp.ka.sms.mustache"))
            let preview = try ServerUnderTest(
                databaseURL: db.url, environment: ["LEDGER_TEMPLATES_DIR": folder.path, "LEDGER_OTP_TTL_SECONDS": "600"])
            let (previewed, text) = try await preview.ledger(["templates", "preview", "otp", "--locale", "ka"])
            try await preview.shutdown()
            #expect(previewed == 0)
            #expect(text.contains("321Fit: 482915 (10 წუთი)"), "\(text)")
        }
    }
}
