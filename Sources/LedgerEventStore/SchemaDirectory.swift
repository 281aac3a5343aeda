import Foundation

/// Finds the `schema/` folder of migration files.
public enum SchemaDirectory {
    /// `LEDGER_SCHEMA_DIR`, else `./schema`, else a `schema` folder beside or above the
    /// executable (a checkout's `.build/…/ledger`), else `/usr/share/account-ledger/schema`.
    public static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URL {
        var candidates: [URL] = []
        if let configured = environment["LEDGER_SCHEMA_DIR"], !configured.isEmpty {
            candidates.append(URL(fileURLWithPath: configured))
        }
        candidates.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("schema"))
        if var directory = Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent() {
            for _ in 0..<6 {
                candidates.append(directory.appendingPathComponent("schema"))
                directory = directory.deletingLastPathComponent()
            }
        }
        candidates.append(URL(fileURLWithPath: "/usr/share/account-ledger/schema"))
        for candidate in candidates where containsMigrations(candidate) {
            return candidate
        }
        throw SchemaError("no schema/ folder with migrations found; set LEDGER_SCHEMA_DIR")
    }

    static func containsMigrations(_ directory: URL) -> Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.contains { $0.hasPrefix("001_") && $0.hasSuffix(".sql") }
    }
}
