import Foundation
import HTTPTypes
import Hummingbird

/// `/healthz` (the process is up) and `/readyz` (it can serve: database and schema current).
public struct HealthController: Sendable {
    let readiness: any Readiness

    public init(readiness: any Readiness) {
        self.readiness = readiness
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.get("/healthz") { _, _ in
            JSONResponse(.ok, ["status": .string("ok")])
        }
        routes.get("/readyz") { _, _ in
            if let notReady = await readiness.check() {
                throw APIError(
                    .serviceUnavailable, .notReady, "Not ready: \(notReady.reason).",
                    extra: notReady.database.map { ["database": .string($0.rawValue)] } ?? [:], headers: [.retryAfter: "1"])
            }
            guard let standby = readiness.standbyStatus() else { return JSONResponse(.ok, ["status": .string("ready")]) }
            // Ready either way: past the lag bound the readers read the primary, and say why.
            return JSONResponse(.ok, ["status": .string("ready"), "replication": .object(Self.replication(standby))])
        }
        return routes
    }

    /// `/readyz`'s `replication` (openapi.yaml).
    static func replication(_ status: StandbyStatus) -> [String: JSONValue] {
        [
            "reading_from": .string(status.readingFrom.rawValue),
            "lag_seconds": status.lagSeconds.map { .double($0) } ?? .null,
            "lag_bytes": status.lagBytes.map { .int($0) } ?? .null,
            "max_lag_seconds": .int(Int64(status.maxLagSeconds)),
            "reason": status.reason.map { .string($0.rawValue) } ?? .null,
        ]
    }
}
