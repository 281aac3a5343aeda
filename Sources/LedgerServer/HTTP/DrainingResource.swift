import ServiceLifecycle

/// A long-lived resource in the service group: it does nothing until the group shuts down,
/// then drains (`drain`: close the pool, finish the hashes, write the last session uses).
/// A group shuts its services down last to first, so a resource listed before the servers
/// and workers drains only after every one that uses it has stopped.
public struct DrainingResource: Service, CustomStringConvertible {
    public let description: String
    /// Ends the resource (the group calls it at shutdown; a one-shot command, when it is done).
    public let drain: @Sendable () async -> Void

    public init(_ name: String, drain: @escaping @Sendable () async -> Void) {
        self.description = name
        self.drain = drain
    }

    public func run() async throws {
        try? await gracefulShutdown()
        await drain()
    }
}
