import Foundation
import Synchronization

/// A progress line on standard error: redrawn in place on a terminal (at most ten times a
/// second), one line per tenth of the work otherwise (logs, CI).
public final class ProgressBar: Sendable {
    private let label: String
    private let isTerminal = isatty(STDERR_FILENO) == 1
    /// When the line was last drawn, and the last tenth written: one writer at a time.
    private let drawn = Mutex((at: ContinuousClock.now - .seconds(1), tenth: -1))

    public init(label: String) {
        self.label = label
    }

    /// Shows `done` of `total`, with a free-form `detail` after the figures.
    public func update(done: Int, total: Int, detail: String = "") {
        drawn.withLock { drawn in
            let fraction = total > 0 ? Double(done) / Double(total) : 1
            let tenth = Int(fraction * 10)
            if isTerminal {
                guard ContinuousClock.now - drawn.at >= .milliseconds(100) || done == total else { return }
                drawn.at = .now
                let filled = Int(fraction * 30)
                let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: 30 - filled)
                FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(Int(fraction * 100))% \(done)/\(total) \(detail)   ".utf8))
            } else if tenth > drawn.tenth {
                drawn.tenth = tenth
                FileHandle.standardError.write(Data("\(label): \(Int(fraction * 100))% \(done)/\(total) \(detail)\n".utf8))
            }
        }
    }

    /// Ends the in-place line.
    public func finish() {
        if isTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
