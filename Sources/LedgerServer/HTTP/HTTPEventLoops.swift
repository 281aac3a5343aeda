import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// The HTTP servers' event loops: one group per thread count for the process's life, as NIO's
/// own singleton group is (servers and tests come and go; the threads stay).
///
/// Fewer loops than cores by default: a loop only parses requests and writes answers, while
/// the handlers run on Swift's global executor and the database's answers arrive on the
/// client's own thread. On 2 cores one loop served `GET /me/auth-methods` 14% faster than
/// two, which fought the executor's threads and PostgreSQL for the cores (BENCHMARKS.md).
public enum HTTPEventLoops {
    /// Half the cores, at least one.
    public static let defaultThreads = max(1, System.coreCount / 2)

    private static let groups = Mutex<[Int: MultiThreadedEventLoopGroup]>([:])

    /// The process's group of `threads` loops.
    public static func group(threads: Int) -> MultiThreadedEventLoopGroup {
        groups.withLock { groups in
            if let group = groups[threads] { return group }
            let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
            groups[threads] = group
            return group
        }
    }
}
