import LedgerEventStore
import ServiceLifecycle

/// Hears other instances' commits (PostgreSQL NOTIFY) for as long as the service group runs,
/// so this instance's feed followers and dispatchers wake at once instead of at their next poll.
public struct RemoteCommitListener: Service {
    let store: EventStore
    let url: String

    public init(store: EventStore, url: String) {
        self.store = store
        self.url = url
    }

    public func run() async throws {
        let listener = store.listenForRemoteCommits(url: url)
        defer { listener.stop() }
        try? await gracefulShutdown()
    }
}
