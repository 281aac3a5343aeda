import Foundation
import LedgerAccounts
import LedgerCore
import LedgerDelivery
import LedgerTestSupport
import Testing

/// `TwilioSMSSink` against a fake of Twilio's Messages API on loopback.
@Suite("Twilio SMS sink")
struct TwilioSMSSinkTests {
    static let sid = "AC0123456789abcdef0123456789abcdef"
    static let token = "twilio-auth-token-5f2c"
    let templates: MessageTemplates

    init() throws {
        templates = try MessageTemplates()
    }

    func sink(_ server: FakeTwilioServer, from: String = "+15005550006") throws -> TwilioSMSSink {
        try TwilioSMSSink(accountSID: Self.sid, authToken: Self.token, from: from, baseURL: server.baseURL, rendering: templates)
    }

    static func otp(to number: String = "+995511200300") -> OutboxMessage {
        OutboxMessage(channel: .sms, to: number, template: "otp", code: "482915")
    }

    /// Delivers `message`, returning the error it threw (nil when it went).
    func failure(_ sink: TwilioSMSSink, _ message: OutboxMessage = otp()) async -> DeliveryError? {
        do {
            try await sink.deliver(message)
            return nil
        } catch let error as DeliveryError {
            return error
        } catch {
            Issue.record("not a DeliveryError: \(error)")
            return nil
        }
    }

    @Test("a text goes as a form with To, Body and From, under HTTP Basic, to the account's Messages resource")
    func sendsFromNumber() async throws {
        let server = FakeTwilioServer()
        try await server.serve {
            let sink = try sink(server)
            #expect(sink.provider == "twilio")
            try await sink.deliver(Self.otp())
            let request = try #require(server.requests.first)
            #expect(server.requests.count == 1)
            #expect(request.path == "/2010-04-01/Accounts/\(Self.sid)/Messages.json")
            #expect(request.authorization == "Basic " + Data("\(Self.sid):\(Self.token)".utf8).base64EncodedString())
            #expect(request.contentType == "application/x-www-form-urlencoded")
            // The `+` arrives as a plus: percent-encoded, not read as a space.
            #expect(
                request.fields == [
                    "To": "+995511200300", "Body": "321Fit code: 482915. It expires in 5 minutes.", "From": "+15005550006",
                ])
        }
    }

    @Test("a code's text asks Twilio to hold it no longer than the code works (ValidityPeriod)")
    func validityPeriod() async throws {
        let server = FakeTwilioServer()
        try await server.serve {
            let clock = ManualClock()
            let sink = try TwilioSMSSink(
                accountSID: Self.sid, authToken: Self.token, from: "+15005550006", baseURL: server.baseURL, rendering: templates,
                clock: clock)
            var code = Self.otp()
            code.expiresAt = clock.now().addingTimeInterval(299.2)
            try await sink.deliver(code)
            #expect(server.requests.last?.fields["ValidityPeriod"] == "300")
            code.expiresAt = clock.now().addingTimeInterval(86_400)
            try await sink.deliver(code)
            #expect(server.requests.last?.fields["ValidityPeriod"] == "36000")
            // A message that carries no expiry leaves Twilio's default.
            code.expiresAt = nil
            try await sink.deliver(code)
            #expect(server.requests.last?.fields["ValidityPeriod"] == nil)
        }
    }

    @Test("a Messaging Service SID (MG…) goes as MessagingServiceSid, with no From")
    func sendsFromMessagingService() async throws {
        let server = FakeTwilioServer()
        try await server.serve {
            try await sink(server, from: "MG0123456789abcdef0123456789abcdef").deliver(Self.otp())
            let fields = try #require(server.requests.first).fields
            #expect(fields["MessagingServiceSid"] == "MG0123456789abcdef0123456789abcdef")
            #expect(fields["From"] == nil)
            #expect(fields["To"] == "+995511200300")
        }
    }

    @Test("Twilio's answers map to kinds: 21211 permanent, 429 and 500 temporary, 401 and 403 and a bad sender configuration")
    func errorMapping() async throws {
        let server = FakeTwilioServer()
        try await server.serve {
            let sink = try sink(server)
            server.answerError(.badRequest, code: 21211, message: "The 'To' number +995511200300 is not a valid phone number.")
            let invalid = try #require(await failure(sink))
            #expect(invalid.kind == .permanent)
            #expect(!invalid.isRetryable)
            #expect(invalid.description.contains("21211"))
            #expect(invalid.description.contains("+9955•••300"))
            #expect(!invalid.description.contains("+995511200300"))

            server.answerError(.tooManyRequests, code: 20429, message: "Too Many Requests")
            #expect(await failure(sink)?.kind == .temporary)
            server.answerError(.internalServerError, code: 20500, message: "Internal Server Error")
            #expect(await failure(sink)?.kind == .temporary)
            server.answer(.serviceUnavailable, "<html>down</html>")
            let down = try #require(await failure(sink))
            #expect(down.kind == .temporary && down.description == "Twilio answered 503")
            server.answerError(.unauthorized, code: 20003, message: "Authenticate")
            #expect(await failure(sink)?.kind == .configuration)
            server.answerError(.forbidden, code: 20403, message: "Forbidden")
            #expect(await failure(sink)?.kind == .configuration)
            server.answerError(.badRequest, code: 21212, message: "The 'From' number +15005550001 is not a valid phone number.")
            let sender = try #require(await failure(sink))
            #expect(sender.kind == .configuration && !sender.description.contains("+15005550001"))
            // The destination's country out of reach, or not enabled: the asker chose it, so no retry.
            server.answerError(.badRequest, code: 21606, message: "The 'From' phone number provided is not a valid message-capable number")
            #expect(await failure(sink)?.kind == .permanent)
            server.answerError(.badRequest, code: 21408, message: "Permission to send an SMS has not been enabled for the region")
            #expect(await failure(sink)?.kind == .permanent)
            server.answerError(.badRequest, code: 21611, message: "This 'From' number has exceeded the maximum number of queued messages")
            #expect(await failure(sink)?.kind == .temporary)
            #expect(await failure(sink) == nil)
        }
    }

    @Test("an error names no number, code or token, even where Twilio's text quotes them")
    func errorsNameNoSecret() async throws {
        let server = FakeTwilioServer()
        try await server.serve {
            server.answerError(
                .badRequest, code: 21617,
                message:
                    "Body '321Fit code: 482915. It expires in 5 minutes.' to +995 511 200300 refused; token \(Self.token); ref 99551120")
            let error = try #require(await failure(try sink(server)))
            #expect(error.kind == .permanent)
            for secret in ["482915", Self.token, "995511200300", "99551120"] {
                #expect(!error.description.contains(secret), "\(secret) in \(error.description)")
            }
            #expect(error.description.contains("21617"))
        }
    }

    @Test("a base URL that echoes the request's headers gets no credential into the error, in any form, and forges no line")
    func echoedCredentials() async throws {
        let server = FakeTwilioServer()
        try await server.serve {
            let forged = "2026-12-06T10:00:00+0000 info ledger: forged=line [LedgerServer] all is well"
            server.answerEchoingHeaders(.unauthorized, then: "\u{1B}[2J\(forged)")
            let error = try #require(await failure(try sink(server)))
            #expect(error.kind == .configuration)
            let basic = Data("\(Self.sid):\(Self.token)".utf8).base64EncodedString()
            for secret in [Self.token, basic, "\(Self.sid):\(Self.token)", "\n", "\r", "\u{1B}"] {
                #expect(!error.description.contains(secret), "\(secret.debugDescription) in \(error.description)")
            }
            #expect(error.description.contains("20003") && error.description.contains("<redacted>"), "\(error.description)")
        }
    }

    @Test("a redirect is not followed: the credentials go to the configured host only")
    func redirectNotFollowed() async throws {
        let server = FakeTwilioServer()
        try await server.serve {
            server.answer(.movedPermanently, location: server.baseURL + "/elsewhere")
            let error = try #require(await failure(try sink(server)))
            #expect(error.kind == .configuration)
            #expect(server.requests.count == 1)
        }
    }

    @Test("no answer (nothing listening) is temporary")
    func networkError() async throws {
        // A port that was just free: bound, then closed.
        let server = FakeTwilioServer()
        var base = ""
        try await server.serve { base = server.baseURL }
        let sink = try TwilioSMSSink(
            accountSID: Self.sid, authToken: Self.token, from: "+15005550006", baseURL: base, rendering: templates, timeout: .seconds(2))
        let error = try #require(await failure(sink))
        #expect(error.kind == .temporary)
        #expect(!error.description.contains("995511200300") && !error.description.contains("482915"))
    }

    @Test("an email is refused without a request; a template that cannot render is a configuration error")
    func refusals() async throws {
        let server = FakeTwilioServer()
        try await server.serve {
            let email = OutboxMessage(
                channel: .email, to: "jdoe@mail.com", template: "verify_email", link: "https://321.fit/verify-email?token=t")
            #expect(await failure(try sink(server), email)?.kind == .permanent)
            // An otp without its code: the template shows {{code}}.
            let codeless = OutboxMessage(channel: .sms, to: "+995511200300", template: "otp")
            let error = try #require(await failure(try sink(server), codeless))
            #expect(error.kind == .configuration)
            #expect(error.description.contains("otp.sms.mustache"))
            #expect(server.requests.isEmpty)
        }
    }

    @Test("settings that cannot work are refused at start")
    func settings() throws {
        #expect(throws: DeliveryError.self) {
            try TwilioSMSSink(accountSID: "AC1/../x", authToken: "t", from: "+1", rendering: templates)
        }
        #expect(throws: DeliveryError.self) { try TwilioSMSSink(accountSID: "AC1", authToken: "", from: "+1", rendering: templates) }
        #expect(throws: DeliveryError.self) {
            try TwilioSMSSink(accountSID: "AC1", authToken: "t", from: "+1", baseURL: "ftp://x", rendering: templates)
        }
        #expect(TwilioSMSSink.mask("+995511200300") == "+9955•••300")
    }
}
