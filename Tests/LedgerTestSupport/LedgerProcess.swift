import Foundation
import LedgerCore

/// The `ledger` executable run as a separate process, for tests that must kill it the hard way.
///
/// Started with posix_spawn (Foundation's `Process` can hang under Swift concurrency on Linux),
/// with its own environment and its output in a file the test can read afterwards.
public final class LedgerProcess: @unchecked Sendable {
    /// The `ledger` built next to the test bundle (`swift build` and `swift test` put both in
    /// the same products folder).
    public static func executable() throws -> String {
        let products = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        for candidate in [products, products.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("ledger").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw ChildProcess.Failure(description: "no ledger executable beside \(products.path): run `swift build --product ledger` first")
    }

    public let pid: pid_t
    public let outputPath: String
    private let lock = NSLock()
    private var exitStatus: Int32?

    /// Starts `ledger arguments…` with `environment` added to this process's own, in `directory`
    /// when one is given.
    public init(_ arguments: [String], environment: [String: String], directory: String? = nil) throws {
        let executable = try Self.executable()
        outputPath =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("ledger-process-\(UUID().uuidString).log").path
        pid = try ChildProcess.spawn(executable, arguments, environment: environment, outputPath: outputPath, directory: directory)
    }

    deinit {
        if exitStatus == nil {
            _ = Glibc.kill(pid, SIGKILL)
            _ = ChildProcess.waitForExit(pid)
        }
        unlink(outputPath)
    }

    /// What the process printed so far.
    public var output: String {
        (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    }

    /// Sends `signal` (SIGKILL: no shutdown code runs at all) and reaps the process.
    public func kill(_ signal: Int32 = SIGKILL) async {
        _ = Glibc.kill(pid, signal)
        _ = await exited()
    }

    /// Blocks the calling thread until the process ends; its exit code, or 128 + the signal.
    @discardableResult
    public func waitForExit() -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        if let exitStatus { return exitStatus }
        let code = ChildProcess.waitForExit(pid)
        exitStatus = code
        return code
    }

    /// Waits for the process to end on a thread of its own, so Swift concurrency's few
    /// threads stay free meanwhile.
    public func exited() async -> Int32 {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.waitForExit()) }
        }
    }

    /// Runs `ledger arguments…` to completion; its exit code and output.
    public static func run(
        _ arguments: [String], environment: [String: String], directory: String? = nil
    ) async throws -> (status: Int32, output: String) {
        let process = try LedgerProcess(arguments, environment: environment, directory: directory)
        let status = await process.exited()
        return (status, process.output)
    }
}
