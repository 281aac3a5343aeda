import CLibPQ
import Foundation
import Logging

/// What the server tells a connection outside a result: a `NOTICE` from a migration, a
/// `WARNING`, or the `FATAL` a server sends every idle connection as it shuts down. libpq prints
/// these to standard error by default, outside the log's format; here warnings reach the log as
/// warnings and the rest at debug level (a server stopping is seen by the pool anyway).
enum PostgresNotices {
    static let logger = Logger(label: "ledger.postgres")

    /// Routes `handle`'s notices to the log.
    static func install(on handle: OpaquePointer) {
        PQsetNoticeProcessor(
            handle,
            { _, message in
                guard let message else { return }
                // One log line each, whatever the server's text holds.
                let text = String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
                    .replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\r", with: " ")
                if text.hasPrefix("WARNING") {
                    PostgresNotices.logger.warning("\(text)")
                } else {
                    PostgresNotices.logger.debug("\(text)")
                }
            }, nil)
    }
}
