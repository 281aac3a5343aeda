import Foundation
import Logging
import Synchronization

/// The service's log lines, in `StreamLogHandler`'s format
/// (`<time> <level> <label>: <metadata> [<source>] <message>`) at a fraction of its cost on the
/// request path, where every request writes its access line:
/// - metadata set on a logger is only kept, and rendered when a line is written
///   (`StreamLogHandler` renders it on every change, and the server changes a logger's metadata
///   on every request);
/// - the time is UTC (`+0000`), formatted once a second: `StreamLogHandler` calls `localtime`,
///   which reads `/etc/localtime` again for every line when `TZ` is unset;
/// - a line is one `write(2)`, with no stdio lock or buffer in between;
/// - every field is escaped (`LogEscaping`): a CR, LF or ESC that a client, a provider or a relay
///   put in a value cannot start a forged line or send a terminal an escape sequence.
public struct LedgerLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    public var metadataProvider: Logger.MetadataProvider?
    let label: String
    let output: LogOutput

    public init(label: String, output: LogOutput = .standardError) {
        self.label = label
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty { merged.merge(provided) { _, provided in provided } }
        if let explicit = event.metadata, !explicit.isEmpty { merged.merge(explicit) { _, explicit in explicit } }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        var line = LogTimestamp.now()
        line += " \(event.level)"
        if !label.isEmpty { line += " \(LogEscaping.escaped(label))" }
        line += ":"
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            line += " \(LogEscaping.escaped(key))=\(LogEscaping.escaped("\(value)"))"
        }
        line += " [\(LogEscaping.escaped(event.source))] \(LogEscaping.escaped("\(event.message)"))\n"
        output.write(line)
    }
}

/// Where log lines go: a file descriptor (standard error), or a closure in tests.
public struct LogOutput: Sendable {
    let write: @Sendable (String) -> Void

    public init(_ write: @escaping @Sendable (String) -> Void) {
        self.write = write
    }

    public static let standardError = LogOutput { line in
        var line = line
        // One line at a time: a pipe writes at most 4 KiB at once, and a longer line written in
        // parts must not interleave with another thread's.
        standardErrorLock.withLock { _ in
            line.withUTF8 { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = Foundation.write(2, bytes.baseAddress! + offset, bytes.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return
                    }
                    offset += written
                }
            }
        }
    }

    private static let standardErrorLock = Mutex(())
}

/// `2026-11-27T18:25:21+0000`, made once per second.
enum LogTimestamp {
    private static let cache = Mutex<(second: Int, text: String)>((-1, ""))

    static func now() -> String {
        let second = time(nil)
        return cache.withLock { cached in
            if cached.second != second { cached = (second, format(second)) }
            return cached.text
        }
    }

    static func format(_ second: Int) -> String {
        var clock = time_t(second)
        var fields = tm()
        gmtime_r(&clock, &fields)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d+0000", Int(fields.tm_year) + 1900, Int(fields.tm_mon) + 1, Int(fields.tm_mday),
            Int(fields.tm_hour), Int(fields.tm_min), Int(fields.tm_sec))
    }
}
