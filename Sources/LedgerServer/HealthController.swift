import Foundation
import HTTPTypes
import Hummingbird

/// `/healthz` (the process is up) and `/readyz` (it can serve: database and schema current).
public struct HealthController: Sendable {
    let readiness: ReadinessProbe

    public init(readiness: ReadinessProbe) {
        self.readiness = readiness
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.get("/healthz") { _, _ in
            JSONResponse(.ok, ["status": .string("ok")])
        }
        routes.get("/readyz") { _, _ in
            if let reason = await readiness.check() {
                throw APIError(.serviceUnavailable, .notReady, "Not ready: \(reason).", headers: [.retryAfter: "1"])
            }
            guard readiness.readClient != nil else { return JSONResponse(.ok, ["status": .string("ready")]) }
            // Readers on a standby: how far behind it is (null when it cannot be read).
            let lag = await readiness.replicationLag()
            return JSONResponse(
                .ok,
                [
                    "status": .string("ready"),
                    "replication": .object([
                        "lag_bytes": lag.map { .int($0.bytes) } ?? .null, "lag_seconds": lag?.seconds.map { .double($0) } ?? .null,
                    ]),
                ])
        }
        return routes
    }
}
