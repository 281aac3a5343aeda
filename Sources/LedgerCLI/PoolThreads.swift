import Foundation

/// The process's thread-pool threads (NIO names them `TP-#n`: the hashing threads and the
/// database client's), read from `/proc/self/task`: `ledger purge --report-threads` prints how
/// many outlive its resources, which must be none.
enum PoolThreads {
    static func count() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            return name.hasPrefix("TP-#")
        }.count
    }
}
