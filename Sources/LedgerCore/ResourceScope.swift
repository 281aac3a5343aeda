import Synchronization

/// The resources one command made, shut down together when it ends, last made first: making a
/// resource through `own` registers its shutdown, so a one-shot command (a benchmark, a CLI
/// pass) leaves no pool or thread behind. `serve` lists its resources in its service group
/// instead (`ServeAssembly`).
public final class ResourceScope: Sendable {
    private let owned = Mutex<[any DrainingService]>([])

    public init() {}

    /// `resource`, shut down with the scope.
    public func own<Resource: DrainingService>(_ resource: Resource) -> Resource {
        owned.withLock { $0.append(resource) }
        return resource
    }

    /// What it owns, first made first: a long-lived command lists them in its service group.
    public var resources: [any DrainingService] { owned.withLock { $0 } }

    /// Shuts everything owned down, last made first.
    public func shutdown() async {
        let resources = owned.withLock { owned in
            defer { owned.removeAll() }
            return owned
        }
        for resource in resources.reversed() { await resource.shutdown() }
    }
}
