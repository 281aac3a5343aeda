import Foundation
import LedgerApp
import LedgerIdentity
import LedgerServer
import Testing

/// Operators learn the service's settings from the README's table and clients' tooling from
/// openapi.yaml: a variable the code reads and neither names is a setting nobody can find.
@Suite("Configuration: every variable the service reads is documented")
struct ConfigurationDocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every `"LEDGER_…"` literal in the configuration's sources, and every policy setting.
    static func variablesRead() throws -> Set<String> {
        let folder = root.appendingPathComponent("Sources/LedgerApp")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            $0.hasPrefix("LedgerConfiguration") && $0.hasSuffix(".swift")
        }
        var names = Set(Policies.settings.map(\.variable))
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: /"(LEDGER_[A-Z0-9_]+)"/) { names.insert(String(match.output.1)) }
        }
        return names
    }

    @Test("docs/configuration.md's table and openapi.yaml's x-configuration name each one")
    func documented() throws {
        let read = try Self.variablesRead()
        #expect(read.count > 60 && read.contains("LEDGER_SMTP_URL") && read.contains("LEDGER_PURGE_TAKEOVER_SECONDS"))
        let readme = try String(contentsOf: Self.root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        let table = try #require(
            readme.components(separatedBy: "## Configuration").dropFirst().first?.components(separatedBy: "\n## ").first)
        let documented = (OpenAPIDocument.shared.root["x-configuration"] as? [String: Any])?["variables"] as? [String: Any] ?? [:]
        for name in read.sorted() {
            #expect(table.contains("`\(name)`"), "docs/configuration.md's table does not name \(name)")
            #expect(documented[name] != nil, "openapi.yaml's x-configuration does not name \(name)")
        }
    }
}
