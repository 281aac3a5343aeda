import Foundation

/// A progress line on standard error: redrawn in place on a terminal (at most ten times a
/// second), one line per tenth of the work otherwise (logs, CI).
public final class ProgressBar: @unchecked Sendable {
    private let lock = NSLock()
    private let label: String
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private var lastDraw = ContinuousClock.now - .seconds(1)
    private var lastTenth = -1

    public init(label: String) {
        self.label = label
    }

    /// Shows `done` of `total`, with a free-form `detail` after the figures.
    public func update(done: Int, total: Int, detail: String = "") {
        lock.withLock {
            let fraction = total > 0 ? Double(done) / Double(total) : 1
            let tenth = Int(fraction * 10)
            if isTerminal {
                guard ContinuousClock.now - lastDraw >= .milliseconds(100) || done == total else { return }
                lastDraw = .now
                let filled = Int(fraction * 30)
                let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: 30 - filled)
                FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(Int(fraction * 100))% \(done)/\(total) \(detail)   ".utf8))
            } else if tenth > lastTenth {
                lastTenth = tenth
                FileHandle.standardError.write(Data("\(label): \(Int(fraction * 100))% \(done)/\(total) \(detail)\n".utf8))
            }
        }
    }

    /// Ends the in-place line.
    public func finish() {
        if isTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
