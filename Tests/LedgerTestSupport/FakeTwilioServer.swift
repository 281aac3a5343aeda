import Foundation
import HTTPTypes
import Hummingbird

/// Twilio's Messages API on loopback: records what each POST carried (path, Basic credentials,
/// content type, form fields) and answers as told, 201 `queued` by default, as Twilio does.
public final class FakeTwilioServer: @unchecked Sendable {
    public init() {}

    /// One request as it arrived.
    public struct Received: Sendable {
        public let path: String
        public let authorization: String?
        public let contentType: String?
        public let fields: [String: String]
    }

    private let lock = NSLock()
    private var received: [Received] = []
    private var answers: [(status: HTTPResponse.Status, body: String, location: String?)] = []
    /// Error answers whose message quotes the request's headers, as a misconfigured base URL
    /// (a debugging echo service, a proxy) may answer; `message` is put after them.
    private var echoes: [(status: HTTPResponse.Status, message: String)] = []
    public private(set) var baseURL = ""

    /// The requests, in order.
    public var requests: [Received] { lock.withLock { received } }

    /// The next request gets this answer (then the default again).
    public func answer(_ status: HTTPResponse.Status, _ body: String = "{}", location: String? = nil) {
        lock.withLock { answers.append((status, body, location)) }
    }

    /// The next request gets an error answer quoting its own headers, then `message`.
    public func answerEchoingHeaders(_ status: HTTPResponse.Status, then message: String) {
        lock.withLock { echoes.append((status, message)) }
    }

    /// A Twilio error answer, as its API writes them.
    public func answerError(_ status: HTTPResponse.Status, code: Int, message: String) {
        let object: [String: Any] = [
            "code": code, "message": message, "more_info": "https://www.twilio.com/docs/errors/\(code)", "status": Int(status.code),
        ]
        answer(status, String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self))
    }

    static func form(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ") }
            guard let name = parts.first?.removingPercentEncoding else { continue }
            fields[name] = parts.count == 2 ? parts[1].removingPercentEncoding ?? "" : ""
        }
        return fields
    }

    func handle(_ request: Request) async throws -> Response {
        let body = try await request.body.collect(upTo: 1 << 16)
        let next = lock.withLock {
            received.append(
                Received(
                    path: request.uri.path, authorization: request.headers[.authorization], contentType: request.headers[.contentType],
                    fields: Self.form(String(buffer: body))))
            return answers.isEmpty ? nil : answers.removeFirst()
        }
        if let echo = lock.withLock({ echoes.isEmpty ? nil : echoes.removeFirst() }) {
            let quoted = request.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\r\n")
            let object: [String: Any] = ["code": 20003, "message": "\(quoted)\n\(echo.message)", "status": Int(echo.status.code)]
            let text = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
            return Response(
                status: echo.status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        let (status, text, location) =
            next ?? (.created, #"{"sid":"SM0123456789abcdef0123456789abcdef","status":"queued"}"#, nil)
        var headers: HTTPFields = [.contentType: "application/json"]
        if let location { headers[.location] = location }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// Runs `body` with the server listening.
    public func serve(_ body: () async throws -> Void) async throws {
        let router = Router()
        router.post("/2010-04-01/Accounts/:sid/Messages.json") { request, _ in try await self.handle(request) }
        router.post("/elsewhere") { request, _ in try await self.handle(request) }
        try await withLoopbackServer(router, label: "fake-twilio") { port in
            baseURL = "http://127.0.0.1:\(port)"
            try await body()
        }
    }
}
