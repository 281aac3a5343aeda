import Foundation

/// Runs programs with posix_spawn and waitpid.
///
/// Foundation's `Process.waitUntilExit` can hang when called from Swift concurrency on Linux;
/// this blocks only the calling thread and nothing else.
public enum ChildProcess {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// Runs `executable` with `arguments`; returns its exit status and combined output.
    public static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let outputPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("ledger-child-\(UUID().uuidString).log").path
        defer { unlink(outputPath) }
        let pid = try spawn(executable, arguments, outputPath: outputPath)
        let exitCode = waitForExit(pid)
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return (exitCode, output)
    }

    /// Starts `executable` with standard input from /dev/null and standard output and error
    /// into `outputPath`; `environment` entries are added to this process's own (an empty value
    /// unsets the variable); it runs in
    /// `directory` when one is given.
    public static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], outputPath: String,
        directory: String? = nil
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        var merged = ProcessInfo.processInfo.environment
        for (name, value) in environment { merged[name] = value.isEmpty ? nil : value }
        // Glibc's posix_spawn_file_actions_addchdir_np is not visible to Swift: coreutils' env
        // changes the directory, then executes the program.
        let (program, programArguments) =
            directory.map { ("/usr/bin/env", ["-C", $0, executable] + arguments) } ?? (executable, arguments)
        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + programArguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, envp)
        guard spawned == 0 else {
            throw Failure(description: "cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        return pid
    }

    /// Blocks the calling thread until `pid` ends; its exit code, or 128 + the signal that ended it.
    public static func waitForExit(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS are macros; decode the status word by hand.
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}
