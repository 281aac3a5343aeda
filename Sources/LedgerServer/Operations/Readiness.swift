/// What `/readyz` asks: whether this instance can serve, and how its readers' standby is doing.
/// The wiring answers it from the database (`ReadinessProbe`); the controller only translates.
public protocol Readiness: Sendable {
    /// nil when ready, else why not.
    func check() async -> NotReady?
    /// The standby the readers use (`LEDGER_READ_DATABASE_URL`): nil without one.
    func standbyStatus() -> StandbyStatus?
}
