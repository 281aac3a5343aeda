/// An error that says whether the service behind it is only briefly away (a database restarting,
/// a pool with nothing to lend): the HTTP layer answers it `503` with `Retry-After` without
/// knowing which adapter failed.
public protocol TemporaryUnavailability: Error {
    var isTemporarilyUnavailable: Bool { get }
    /// Whether it is busy (a pool with nothing to lend: `service_unavailable`) rather than away
    /// (a database that cannot be reached or takes no writes: `unavailable`).
    var isSaturated: Bool { get }
}

extension TemporaryUnavailability {
    public var isSaturated: Bool { false }
}
