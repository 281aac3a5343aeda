import Foundation
import LedgerCore
import Testing

@Suite("DecodableShape")
struct DecodableShapeTests {
    enum Colour: String, Codable, CaseIterable { case red, green }

    struct Inner: Codable {
        var amount: Int64
        var note: String?
    }

    struct Sample: Codable {
        var id: UUID
        var name: String?
        var at: Date
        var colour: Colour
        var tags: [String]
        var inner: Inner?
        var flag: Bool
        enum CodingKeys: String, CodingKey { case id, name, at = "recorded_at", colour, tags, inner, flag }
    }

    @Test("fields in decoding order, with JSON names and types, required or optional, nested objects dotted")
    func fields() {
        let fields = DecodableShape.fields(of: Sample.self)
        #expect(fields.map(\.name) == ["id", "name", "recorded_at", "colour", "tags", "inner", "inner.amount", "inner.note", "flag"])
        #expect(
            fields.map(\.type) == [
                "uuid", "string", "timestamp", "string (red, green)", "array of string", "object", "integer", "string", "boolean",
            ])
        #expect(fields.map(\.required) == [true, false, true, true, true, false, true, false, true])
    }
}
