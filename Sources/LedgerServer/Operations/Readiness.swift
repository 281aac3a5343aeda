/// What `/readyz` asks: whether this instance can serve, and how its readers' standby is doing.
/// The wiring answers it from the database (`ReadinessProbe`); the controller only translates.
public protocol Readiness: Sendable {
    /// nil when ready, else the reason (safe to show: no secrets, no connection string).
    func check() async -> String?
    /// The standby the readers use (`LEDGER_READ_DATABASE_URL`): nil without one.
    func standbyStatus() -> StandbyStatus?
}
