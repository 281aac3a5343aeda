/// An error that says whether the service behind it is only briefly away (a database restarting,
/// a pool with nothing to lend): the HTTP layer answers it `503` with `Retry-After` without
/// knowing which adapter failed.
public protocol TemporaryUnavailability: Error {
    var isTemporarilyUnavailable: Bool { get }
}
