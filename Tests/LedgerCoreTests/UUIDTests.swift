import Foundation
import LedgerCore
import Testing

@Suite("Random UUIDs")
struct RandomUUIDTests {
    @Test("random UUIDs are version 4, RFC 4122 variant, and do not repeat")
    func versionAndVariant() {
        let ids = (0..<1_000).map { _ in UUID.random() }
        #expect(Set(ids).count == ids.count)
        for id in ids {
            let text = id.lowercased
            #expect(Array(text)[14] == "4")
            #expect("89ab".contains(Array(text)[19]))
            #expect(UUID(uuidString: text) == id)
        }
    }
}
