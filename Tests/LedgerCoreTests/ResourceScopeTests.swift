import LedgerCore
import Synchronization
import Testing

@Suite("Resource scope: what a command made is shut down with it")
struct ResourceScopeTests {
    /// Records the order its resources were shut down in.
    final class ShutdownLog: Sendable {
        let names = Mutex<[String]>([])
    }

    struct Resource: DrainingService {
        let name: String
        let log: ShutdownLog
        func shutdown() async { log.names.withLock { $0.append(name) } }
    }

    @Test("every resource made through the scope is shut down once, last made first")
    func shutsDownInReverse() async {
        let log = ShutdownLog()
        let scope = ResourceScope()
        let pool = scope.own(Resource(name: "pool", log: log))
        _ = scope.own(Resource(name: "hasher", log: log))
        #expect(pool.name == "pool")
        await scope.shutdown()
        await scope.shutdown()
        #expect(log.names.withLock { $0 } == ["hasher", "pool"])
    }
}
