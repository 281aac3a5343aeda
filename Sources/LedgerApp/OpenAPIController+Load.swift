import Foundation
import LedgerEventStore
import LedgerServer

extension OpenAPIController {
    /// Reads `openapi.yaml` from `LEDGER_OPENAPI_PATH`, beside the `schema/` folder, or
    /// `/usr/share/account-ledger/openapi.yaml`.
    public static func load(environment: [String: String] = ProcessInfo.processInfo.environment) -> OpenAPIController? {
        var candidates: [URL] = []
        if let configured = environment["LEDGER_OPENAPI_PATH"] { candidates.append(URL(fileURLWithPath: configured)) }
        if let schema = try? SchemaDirectory.locate(environment: environment) {
            candidates.append(schema.deletingLastPathComponent().appendingPathComponent("openapi.yaml"))
        }
        candidates.append(URL(fileURLWithPath: "/usr/share/account-ledger/openapi.yaml"))
        for candidate in candidates {
            if let data = FileManager.default.contents(atPath: candidate.path) { return OpenAPIController(document: Array(data)) }
        }
        return nil
    }
}
