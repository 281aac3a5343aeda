import ServiceLifecycle

/// A long-lived resource (a database pool, the hashing threads, the SMTP connections): a
/// `Service` that does nothing until its service group shuts down, then drains (`shutdown`).
/// A group shuts its services down last to first, so a resource listed before the servers and
/// workers drains only after every one that uses it has stopped. A one-shot command that made
/// one calls `shutdown` itself when it is done (`PurgeAssembly`).
public protocol DrainingService: Service {
    /// Lets the work under way finish, then releases the resource.
    func shutdown() async
}

extension DrainingService {
    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }
}
