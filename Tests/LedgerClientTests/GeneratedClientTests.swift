import Foundation
import LedgerClient
import LedgerCore
import LedgerCrypto
import Testing

@Suite("The committed generated client")
struct GeneratedClientTests {
    @Test("was generated from today's openapi.yaml (else run scripts/generate-client.sh)")
    func generatedFromTodaysDocument() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let document = try Data(contentsOf: root.appendingPathComponent("openapi.yaml"))
        #expect(
            Hex.encode(SHA256.hash(Array(document))) == OpenAPIDocument.sha256,
            "Sources/LedgerClient/Generated is stale: run scripts/generate-client.sh and commit what it writes")
    }
}
