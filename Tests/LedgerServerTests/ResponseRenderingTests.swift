import Foundation
import HTTPTypes
import Hummingbird
import LedgerIdentity
import Logging
import Synchronization
import Testing

@testable import LedgerServer

@Suite("Response rendering")
struct ResponseRenderingTests {
    @Test("JSONValue renders the bytes JSONEncoder wrote: sorted keys, escapes, whole doubles, nulls")
    func jsonValueMatchesJSONEncoder() throws {
        let value = JSONValue.object([
            "zeta": .array([.int(-3), .int(Int64.max), .double(2), .double(1.5), .double(-0.25), .null, .bool(true), .bool(false)]),
            "alpha": .string("quote \" backslash \\ slash / tab \t newline \n bell \u{07} é 👋"),
            "nested": .object(["b": .object([:]), "a": .array([])]),
            "empty": .string(""),
        ])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let expected = String(decoding: try encoder.encode(value), as: UTF8.self)
        #expect(String(decoding: value.encoded(), as: UTF8.self) == expected)
        #expect(String(decoding: JSONValue.double(.nan).encoded(), as: UTF8.self) == "null")
        #expect(JSONValue(nil as String?) == .null && JSONValue("a") == .string("a"))
        #expect(JSONValue(timestamp: nil) == .null)
        #expect(JSONValue(timestamp: Date(timeIntervalSince1970: 0)) == .string(RFC3339.format(Date(timeIntervalSince1970: 0))))
    }

    @Test("a bearer credential is read without the blanks around it; other schemes are none")
    func bearerCredential() {
        func credential(_ header: String?) -> String? {
            var fields = HTTPFields()
            if let header { fields[.authorization] = header }
            return Request(
                head: .init(method: .get, scheme: "http", authority: "x", path: "/", headerFields: fields), body: .init(buffer: .init())
            )
            .bearerCredential
        }
        #expect(credential("Bearer abc.def") == "abc.def")
        #expect(credential("Bearer  \tabc \t") == "abc")
        #expect(credential("Bearer    ") == nil)  // HTTP drops the trailing blanks, and "Bearer" alone has no credential
        #expect(credential("Basic abc") == nil)
        #expect(credential("bearer abc") == nil)
        #expect(credential(nil) == nil)
    }

    @Test("the service's log handler writes the lines StreamLogHandler writes, time aside")
    func logLines() {
        let plain = LineCapture()
        let deferred = LineCapture()
        var plainLogger = Logger(label: "test") { StreamLogHandler(label: $0, stream: plain, metadataProvider: nil) }
        var deferredLogger = Logger(label: "test") {
            LedgerLogHandler(
                label: $0,
                output: LogOutput { line in
                    var capture = deferred
                    capture.write(line)
                })
        }
        plainLogger[metadataKey: "request_id"] = "r-1"
        deferredLogger[metadataKey: "request_id"] = "r-1"
        plainLogger[metadataKey: "b"] = "logger"
        deferredLogger[metadataKey: "b"] = "logger"
        plainLogger.info("hello", metadata: ["b": "statement", "a": "1"])
        deferredLogger.info("hello", metadata: ["b": "statement", "a": "1"])
        plainLogger.warning("plain")
        deferredLogger.warning("plain")
        plainLogger.logLevel = .error
        deferredLogger.logLevel = .error
        plainLogger.info("hidden")
        deferredLogger.info("hidden")
        #expect(deferred.lines.count == 2)
        #expect(deferred.lines == plain.lines)
        #expect(deferred.lines.first?.hasSuffix(" test: a=1 b=statement request_id=r-1 [LedgerServerTests] hello") == true)
        // Errors are rendered as StreamLogHandler renders them.
        struct Oops: Error {}
        plainLogger.logLevel = .info
        deferredLogger.logLevel = .info
        plainLogger.error("failed", error: Oops())
        deferredLogger.error("failed", error: Oops())
        #expect(deferred.lines.count == 3 && deferred.lines == plain.lines)
    }

    @Test("every field of a log line is escaped: a CR, LF or ESC in a value, a key or the message forges no line and no terminal escape")
    func logEscaping() {
        let written = LockedLines()
        let logger = Logger(label: "test") { LedgerLogHandler(label: $0, output: LogOutput { written.append($0) }) }
        let forged = "\n2026-12-06T10:00:00+0000 info ledger: forged=1 [LedgerServer] ok"
        logger.warning(
            "failed\r\(forged)", metadata: ["error": "relay said\(forged)\u{1B}[2J", "k\ney": "v\u{9B}1m\u{2028}", "tab": "a\tb"])
        let lines = written.lines
        #expect(lines.count == 1 && lines[0].filter { $0 == "\n" }.count == 1 && lines[0].hasSuffix("\n"))
        let line = lines[0].dropLast()
        #expect(!line.unicodeScalars.contains { $0.properties.generalCategory == .control || $0.value == 0x2028 })
        #expect(line.contains(#"error=relay said\n2026-12-06T10:00:00+0000 info ledger: forged=1 [LedgerServer] ok\u{1B}[2J"#))
        #expect(line.contains(#"k\ney=v\u{9B}1m\u{2028}"#) && line.contains(#"tab=a\tb"#))
        #expect(line.hasSuffix(#"[LedgerServerTests] failed\r\n2026-12-06T10:00:00+0000 info ledger: forged=1 [LedgerServer] ok"#))
        // Nothing to escape: the field as it is. A backslash is doubled, so `\n` in a value never
        // reads as an escaped line break; bidi controls are escaped too.
        #expect(LogEscaping.escaped("a•••@example.com — ✓") == "a•••@example.com — ✓")
        #expect(LogEscaping.escaped(#"C:\new"#) == #"C:\\new"# && LogEscaping.escaped("\u{202E}gnp.exe") == #"\u{202E}gnp.exe"#)
    }

    @Test("log times are UTC, in StreamLogHandler's shape")
    func logTimestamps() {
        #expect(LogTimestamp.format(1_795_803_921) == "2026-11-27T18:25:21+0000")
        #expect(LogTimestamp.format(0) == "1970-01-01T00:00:00+0000")
        #expect(LogTimestamp.now().count == "2026-11-27T18:25:21+0000".count)
    }
}

/// Whole log lines, as written.
final class LockedLines: Sendable {
    private let captured = Mutex<[String]>([])
    var lines: [String] { captured.withLock { $0 } }
    func append(_ line: String) { captured.withLock { $0.append(line) } }
}

/// Captures log lines without their timestamps.
final class LineCapture: TextOutputStream, @unchecked Sendable {
    private let lock = NSLock()
    private var captured: [String] = []
    var lines: [String] { lock.withLock { captured } }

    func write(_ string: String) {
        let line = string.split(separator: " ", maxSplits: 1).last.map(String.init) ?? string
        lock.withLock { captured.append(line.trimmingCharacters(in: .newlines)) }
    }
}
