import Foundation
import LedgerCore
import Testing

@Suite("JSON payload encoder")
struct JSONPayloadEncoderTests {
    struct Empty: Codable {}

    struct Sample: Codable {
        enum Kind: String, Codable { case one, two }
        struct Inner: Codable {
            var label: String
            var rank: Int?
        }
        var id: UUID
        var at: Date
        var name: String
        var count: Int
        var big: Int64
        var small: UInt8
        var flag: Bool
        var kind: Kind
        var note: String?
        var missing: Int?
        var tags: [String]
        var inners: [Inner]
        var byName: [String: Int]
        var nested: [[String]]
        var empty: Empty
        var maybeNested: Inner?
        var zLast: String
        var aFirst: String
        var a_b: String
        var ab: String
        var a1: Int
        var a10: Int
        var a2: Int
    }

    static let formatter: @Sendable (Date) -> String = { ISO8601DateFormatter().string(from: $0) }

    static func foundation(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(formatter(date))
        }
        return Array(try encoder.encode(value))
    }

    static func fast(_ value: some Encodable) throws -> [UInt8] {
        try JSONPayloadEncoder(formatDate: formatter).encode(value)
    }

    static func sample(name: String) -> Sample {
        Sample(
            id: UUID(), at: Date(timeIntervalSince1970: 1_790_000_000), name: name, count: -42, big: Int64.max, small: 255,
            flag: true, kind: .two, note: nil, missing: nil, tags: ["a", "", name],
            inners: [.init(label: name, rank: 3), .init(label: "x")],
            byName: ["b": 2, "a": 1, "A": 0, "_": 9, "é": 5], nested: [[], ["p/q"]], empty: Empty(),
            maybeNested: .init(label: "in", rank: nil), zLast: "z", aFirst: "a", a_b: "_", ab: "ab", a1: 1, a10: 10, a2: 2)
    }

    @Test("writes Foundation's bytes for every kind of field and tricky text")
    func matchesFoundation() throws {
        let texts = [
            "plain", "quote \" and backslash \\", "slash / stays", "tab\tnewline\nreturn\r", "\u{08}\u{0C}\u{00}\u{1F}\u{7F}",
            "ünïcödé ქართული русский", "emoji 👩‍👩‍👧", "\u{2028}\u{2029}", "",
        ]
        for text in texts {
            let value = Self.sample(name: text)
            #expect(try Self.fast(value) == Self.foundation(value))
        }
        #expect(try Self.fast(Empty()) == Self.foundation(Empty()))
        #expect(try Self.fast(["k": [1, 2]]) == Self.foundation(["k": [1, 2]]))
    }

    @Test("random strings encode as Foundation encodes them")
    func randomStrings() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "\"", "\\", "/", "\n", "\u{01}", "\u{1F}", "é", "ქ", "😀", " ", "\u{7F}"]
        for _ in 0..<500 {
            let text = String((0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            let value = ["key " + text: text]
            #expect(try Self.fast(value) == Self.foundation(value))
        }
    }

    @Test("leaves the types JSONEncoder writes its own way to it")
    func refusesSpecialTypes() throws {
        struct Measured: Encodable { var ratio: Double }
        struct Blob: Encodable { var bytes: Data }
        struct Link: Encodable { var url: URL }
        #expect(throws: JSONPayloadEncoder.Unsupported.self) { try Self.fast(Measured(ratio: 0.5)) }
        #expect(throws: JSONPayloadEncoder.Unsupported.self) { try Self.fast(Blob(bytes: Data([1]))) }
        #expect(throws: JSONPayloadEncoder.Unsupported.self) { try Self.fast(Link(url: URL(string: "https://example.com")!)) }
    }

    struct Widths: Encodable {
        var a: Int8 = -8
        var b: Int16 = -16
        var c: UInt16 = 16
        var d: UInt = 42
        var e: UInt32 = 32
        var f: UInt64 = .max
        var g: Int32 = .min
        var h: [Int8] = [1, -1]
    }

    /// Writes through super encoders (keyed, default and unkeyed), a key twice, and a nested value.
    struct Unusual: Encodable {
        enum Keys: String, CodingKey { case name, parent, list }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode("first", forKey: .name)
            try container.encode("second", forKey: .name)
            var parent = container.superEncoder(forKey: .parent).singleValueContainer()
            try parent.encode([3, 4])
            var base = container.superEncoder().unkeyedContainer()
            try base.encode("b")
            var list = container.nestedUnkeyedContainer(forKey: .list)
            var inner = list.superEncoder().container(keyedBy: Keys.self)
            try inner.encode("deep", forKey: .name)
        }
    }

    struct Silent: Encodable {
        func encode(to encoder: any Encoder) throws {}
    }

    @Test("every integer width, super encoders and a key written twice come out as Foundation writes them")
    func unusualShapes() throws {
        #expect(try Self.fast(Widths()) == Self.foundation(Widths()))
        #expect(try Self.fast(Unusual()) == Self.foundation(Unusual()))
        #expect(try Self.fast(["outer": Unusual()]) == Self.foundation(["outer": Unusual()]))
        // A value that writes nothing: Foundation refuses it, so the fast encoder leaves it to Foundation.
        #expect(throws: JSONPayloadEncoder.Unsupported.self) { try Self.fast(Silent()) }
        #expect(throws: (any Error).self) { try Self.foundation(Silent()) }
    }
}
