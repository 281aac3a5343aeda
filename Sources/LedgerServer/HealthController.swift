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
            return JSONResponse(.ok, ["status": .string("ready")])
        }
        return routes
    }
}
