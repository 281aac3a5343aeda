import AsyncHTTPClient
import Foundation
import LedgerAccounts
import LedgerCore
import NIOCore

/// Sends each SMS through Twilio's Messages API (`POST {base}/2010-04-01/Accounts/{sid}/Messages.json`,
/// form-encoded, HTTP Basic with the account SID and auth token), its text rendered by the
/// templates. `From` is the configured number, or `MessagingServiceSid` when the setting is a
/// Messaging Service (`MG…`).
///
/// Twilio's answers map to `DeliveryError` kinds: 2xx sent; 429, 5xx and network errors
/// temporary; 401 and 403 (the credentials) and the errors about the sender (21212, 21601,
/// 21606, 21659) configuration; any other 4xx (21211, an invalid number) permanent. An error's
/// description keeps Twilio's words with every phone number masked (`+9955•••300`) and no
/// code, body or token.
public struct TwilioSMSSink: DeliverySink {
    /// Twilio's API.
    public static let defaultBaseURL = "https://api.twilio.com"
    /// The client every sink shares unless given another: it never follows a redirect, as the
    /// service's other outbound clients, so the credentials go to the configured host only.
    public static let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))

    let accountSID: String
    let authToken: String
    let from: String
    let baseURL: String
    let rendering: any MessageRendering
    let httpClient: HTTPClient
    let timeout: TimeAmount
    let clock: any LedgerClock

    /// Throws a configuration `DeliveryError` for settings that cannot work: an account SID that
    /// is not letters and digits (it goes into the URL's path), an empty token or sender, a
    /// base URL that is not http(s).
    public init(
        accountSID: String, authToken: String, from: String, baseURL: String = defaultBaseURL, rendering: any MessageRendering,
        httpClient: HTTPClient = TwilioSMSSink.httpClient, timeout: TimeAmount = .seconds(10), clock: any LedgerClock = SystemClock()
    ) throws {
        self.clock = clock
        guard !accountSID.isEmpty, accountSID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw DeliveryError("LEDGER_TWILIO_ACCOUNT_SID must be letters and digits (AC…)", kind: .configuration)
        }
        guard !authToken.isEmpty else { throw DeliveryError("LEDGER_TWILIO_AUTH_TOKEN is empty", kind: .configuration) }
        guard !from.isEmpty else { throw DeliveryError("LEDGER_TWILIO_FROM is empty", kind: .configuration) }
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        guard let url = URL(string: base), ["https", "http"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
            throw DeliveryError("LEDGER_TWILIO_BASE_URL must be an http(s) URL", kind: .configuration)
        }
        self.accountSID = accountSID
        self.authToken = authToken
        self.from = from
        self.baseURL = base
        self.rendering = rendering
        self.httpClient = httpClient
        self.timeout = timeout
    }

    public var provider: String { "twilio" }

    /// Whether `LEDGER_TWILIO_FROM` names a Messaging Service rather than a number.
    var usesMessagingService: Bool { from.hasPrefix("MG") }

    public func deliver(_ message: OutboxMessage) async throws {
        guard message.channel == .sms else {
            throw DeliveryError("Twilio sends SMS only, not \(message.channel.rawValue) messages", kind: .permanent)
        }
        let body: String
        do {
            body = try rendering.sms(message)
        } catch let error as TemplateError {
            throw DeliveryError(error)
        }
        var request = HTTPClientRequest(url: "\(baseURL)/2010-04-01/Accounts/\(accountSID)/Messages.json")
        request.method = .POST
        let credentials = Data("\(accountSID):\(authToken)".utf8).base64EncodedString()
        request.headers.add(name: "Authorization", value: "Basic \(credentials)")
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        let sender = usesMessagingService ? ("MessagingServiceSid", from) : ("From", from)
        var fields = [("To", message.to), ("Body", body), sender]
        // A code that arrives after it expired is no use: Twilio drops it rather than queue it longer.
        if let expiresAt = message.expiresAt {
            let seconds = Int(expiresAt.timeIntervalSince(clock.now()).rounded(.up))
            fields.append(("ValidityPeriod", String(min(max(seconds, 1), Self.longestValidityPeriod))))
        }
        request.body = .bytes(ByteBuffer(string: Self.formEncoded(fields)))
        let response: HTTPClientResponse
        let answer: ByteBuffer?
        do {
            response = try await httpClient.execute(request, timeout: timeout)
            // Read whole (small), so the connection goes back to the pool.
            answer = try? await response.body.collect(upTo: 64 * 1024)
        } catch {
            throw DeliveryError(
                "Twilio could not be reached (\(redacted(String(describing: error), message: message, body: body)))",
                kind: .temporary)
        }
        let status = Int(response.status.code)
        if (200..<300).contains(status) { return }
        let (code, text) = Self.twilioError(answer)
        let said = [code.map { "error \($0)" }, text.map { redacted($0, message: message, body: body) }].compactMap { $0 }
        let description = "Twilio answered \(status)" + (said.isEmpty ? "" : " (\(said.joined(separator: ": ")))")
        throw DeliveryError(description, kind: Self.kind(status: status, code: code))
    }

    /// Twilio errors about the sender, not the recipient: the operator's to fix (a wrong
    /// `LEDGER_TWILIO_FROM`, a number not SMS-capable or not Twilio's). Not 21606 (the sender
    /// cannot reach this destination) nor 21408 (its country is not enabled): the destination is
    /// whoever asked for the code's to choose, so those are permanent for that message, or any
    /// number of texts to premium ranges would be retried for an hour and logged as errors.
    static let senderErrors: Set<Int> = [21212, 21601, 21659]
    /// The longest `ValidityPeriod` Twilio takes (10 hours).
    static let longestValidityPeriod = 36_000
    /// Twilio errors that pass: the sender's queue is full (21611).
    static let passingErrors: Set<Int> = [21611]

    /// What an answer means for a retry.
    static func kind(status: Int, code: Int?) -> DeliveryError.Kind {
        switch status {
        case 401, 403: return .configuration
        // A redirect is not followed: the base URL is wrong.
        case 300..<400: return .configuration
        case 408, 429: return .temporary
        case 400..<500:
            if let code, senderErrors.contains(code) { return .configuration }
            if let code, passingErrors.contains(code) { return .temporary }
            return .permanent
        default: return .temporary
        }
    }

    /// Twilio's error `code` and `message` from an error answer's JSON body, when it has them.
    static func twilioError(_ body: ByteBuffer?) -> (code: Int?, message: String?) {
        guard let body, let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any] else {
            return (nil, nil)
        }
        let code = (object["code"] as? NSNumber)?.intValue
        // Whole: `redacted` cuts it, after redacting (a secret cut first would stay in part).
        let message = object["message"] as? String
        return (code, message)
    }

    /// `text` with nothing that identifies the person or opens the account: the recipient's
    /// number and any other of seven or more digits masked; the code, the body and the
    /// credentials gone in every form (the token, `SID:token`, its Basic encoding, and any
    /// `Basic …` or `Bearer …` an endpoint echoes); one line.
    func redacted(_ text: String, message: OutboxMessage, body: String) -> String {
        let basic = "\(accountSID):\(authToken)"
        let encoded = Data(basic.utf8).base64EncodedString()
        let secrets = [
            body, message.code, message.link, message.token, basic, encoded, String(encoded.prefix { $0 != "=" }), authToken,
        ].compactMap { $0 }
        return Self.maskingNumbers(ProviderErrorText.sanitized(text, secrets: secrets))
    }

    /// Every phone number in `text` (seven digits or more, perhaps after a `+`, perhaps spaced)
    /// as `+9955•••300`.
    static func maskingNumbers(_ text: String) -> String {
        // Made per call: only error answers come here, and the type is not Sendable.
        let numberPattern = try! NSRegularExpression(pattern: #"\+?[0-9][0-9 ().-]{5,}[0-9]"#)
        let whole = NSRange(text.startIndex..., in: text)
        var output = text
        for match in numberPattern.matches(in: text, range: whole).reversed() {
            guard let range = Range(match.range, in: text) else { continue }
            let found = text[range]
            let digits = (found.hasPrefix("+") ? "+" : "") + found.filter(\.isNumber)
            guard digits.filter(\.isNumber).count >= 7, let target = Range(match.range, in: output) else { continue }
            output.replaceSubrange(target, with: mask(digits))
        }
        return output
    }

    /// A phone number as logs and errors show it: its country code and first digit, and its
    /// last three (`+995511200300` → `+9955•••300`).
    public static func mask(_ number: String) -> String {
        guard number.count >= 8 else { return "•••" }
        return "\(number.prefix(5))•••\(number.suffix(3))"
    }

    /// `application/x-www-form-urlencoded`: every byte but the unreserved ones percent-encoded
    /// (a `+` in a number must not turn into a space).
    static func formEncoded(_ fields: [(String, String)]) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return fields.map { name, value in
            "\(name.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
    }
}
