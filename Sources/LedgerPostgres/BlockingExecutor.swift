import NIOPosix

/// The threads on which blocking libpq calls run (connecting, preparing, bulk sends, the
/// listener), so they never stall an event loop or the Swift concurrency pool.
public final class BlockingExecutor: Sendable {
    private let threadPool: NIOThreadPool

    /// `threads` bounds how many libpq calls run at once; size it to the connection pool.
    public init(threads: Int) {
        self.threadPool = NIOThreadPool(numberOfThreads: max(1, threads))
        threadPool.start()
    }

    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await threadPool.runIfActive(body)
    }

    public func shutdown() async {
        try? await threadPool.shutdownGracefully()
    }
}
