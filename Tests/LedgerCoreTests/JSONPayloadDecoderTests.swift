import Foundation
import LedgerCore
import Testing

@Suite("JSON payload decoder")
struct JSONPayloadDecoderTests {
    struct Sample: Codable, Equatable {
        enum Kind: String, Codable { case one, two }
        struct Inner: Codable, Equatable {
            var label: String
            var weight: Double?
        }
        var id: UUID
        var at: Date
        var name: String
        var count: Int
        var big: Int64
        var small: UInt8
        var ratio: Double
        var flag: Bool
        var kind: Kind
        var note: String?
        var missing: Int?
        var tags: [String]
        var inners: [Inner]
        var byName: [String: Int]
        var maybeNested: Inner?
    }

    static let decoder = JSONPayloadDecoder(parseDate: { text in
        ISO8601DateFormatter().date(from: text)
    })

    static func foundation<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: Data(text.utf8))
    }

    static func fast<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try decoder.decode(type, from: Array(text.utf8))
    }

    static let sample = #"""
        { "id": "6F9619FF-8B86-D011-B42D-00C04FC964FF", "at": "2026-11-23T10:00:00Z", "name": "q\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00 ő",
          "count": -42, "big": 9007199254740993, "small": 255, "ratio": 2.5e-3, "flag": true, "kind": "two",
          "note": null, "unknown": {"deep": [1, {"x": null}]}, "tags": ["a", "", "c"],
          "inners": [{"label": "x"}, {"label": "y", "weight": 1}], "byName": {"a": 1, "b": 2}, "maybeNested": null }
        """#

    @Test("decodes what Foundation decodes, to the same value")
    func matchesFoundation() throws {
        let fast = try Self.fast(Sample.self, Self.sample)
        #expect(fast == (try Self.foundation(Sample.self, Self.sample)))
        #expect(fast.name == "q\"\\/\u{8}\u{c}\n\r\té😀 ő")
        #expect(fast.big == 9_007_199_254_740_993)
        #expect(fast.id.uuidString == "6F9619FF-8B86-D011-B42D-00C04FC964FF")
        #expect(fast.inners.last?.weight == 1)
        #expect(fast.note == nil && fast.missing == nil && fast.maybeNested == nil)
    }

    @Test("top-level arrays, strings and numbers")
    func topLevel() throws {
        let exact = Date(timeIntervalSinceReferenceDate: 817_000_000.123_456_7)
        #expect(try Self.decoder.decode(Date.self, from: Array(try JSONEncoder().encode(exact))) == exact)
        #expect(try Self.fast([Int].self, " [1, 2 ,3] ") == [1, 2, 3])
        #expect(try Self.fast(String.self, #""plain""#) == "plain")
        #expect(try Self.fast(Double.self, "-0.5E+2") == -50)
        #expect(try Self.fast(Int.self, "3.0") == 3)
        #expect(try Self.fast([String?].self, #"[null, "x"]"#) == [nil, "x"])
        #expect(
            try Self.fast(UUID.self, #""6f9619ff-8b86-d011-b42d-00c04fc964ff""#) == UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")
        )
    }

    @Test(
        "documents that are not RFC 8259 JSON are dataCorrupted (stricter than Foundation, which takes trailing commas)",
        arguments: [
            "", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "01", "1.", "-", "1e", "tru", "nul", "\"open",
            "\"bad \\q escape\"", "\"\\ud83d alone\"", "\"\\u12\"", "{} {}", "[1] x", "\"tab\tinside\"",
            String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
        ])
    func malformed(_ text: String) {
        guard case .dataCorrupted? = Self.fastError(JSONValueProbe.self, Array(text.utf8)) else {
            Issue.record("expected dataCorrupted for \(text.debugDescription)")
            return
        }
    }

    @Test("invalid UTF-8 inside a string is refused")
    func invalidUTF8() {
        let bytes: [UInt8] = Array(#"{"name":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        guard case .dataCorrupted? = Self.fastError([String: String].self, bytes) else {
            Issue.record("invalid UTF-8 was accepted")
            return
        }
    }

    @Test("refusing NUL: a string or key holding U+0000 anywhere is refused at its path; otherwise it is read")
    func refusesNUL() throws {
        struct Body: Decodable { var tags: [String]? }
        let refusing = JSONPayloadDecoder(parseDate: { _ in nil }, refusesNUL: true)
        for (text, path) in [
            (#"{"tags":["ok","a\u0000b"]}"#, "tags.Index 1"), (#"{"x":{"k\u0000":1}}"#, "x.k\u{0}"), (#""\u0000""#, ""),
        ] {
            do {
                _ = try refusing.decode(Body.self, from: Array(text.utf8))
                Issue.record("accepted \(text)")
            } catch DecodingError.dataCorrupted(let context) {
                #expect(context.debugDescription == JSONPayloadDecoder.nulDescription)
                #expect(context.codingPath.map(\.stringValue).joined(separator: ".") == path)
            }
        }
        #expect(try refusing.decode(Body.self, from: Array(#"{"tags":["a\u0001"]}"#.utf8)).tags == ["a\u{1}"])
        // Off by default, for stored payloads.
        let plain = JSONPayloadDecoder(parseDate: { _ in nil })
        #expect(try plain.decode(Body.self, from: Array(#"{"tags":["a\u0000"]}"#.utf8)).tags == ["a\u{0}"])
    }

    @Test("missing keys, nulls, wrong types and bad UUIDs or dates name the field")
    func typedErrors() {
        struct Needs: Decodable {
            var id: UUID
            var at: Date
            var count: Int
            var list: [Int]
        }
        let good = #""id": "6f9619ff-8b86-d011-b42d-00c04fc964ff", "at": "2026-11-23T10:00:00Z", "count": 1"#
        func error(_ body: String) -> DecodingError? { Self.fastError(Needs.self, Array(("{" + body + "}").utf8)) }

        guard case .keyNotFound(let key, _)? = error(good) else {
            Issue.record("missing list")
            return
        }
        #expect(key.stringValue == "list")
        guard case .valueNotFound(_, let context)? = error(good + #", "list": [1, null]"#) else {
            Issue.record("null element")
            return
        }
        #expect(context.codingPath.map(\.stringValue) == ["list", "Index 1"])
        guard case .typeMismatch(_, let mismatch)? = error(good + #", "list": {"a": 1}"#) else {
            Issue.record("object as list")
            return
        }
        #expect(mismatch.codingPath.map(\.stringValue) == ["list"])
        guard case .dataCorrupted(let uuid)? = error(good.replacingOccurrences(of: "6f9619ff-", with: "6f9619ff") + #", "list": []"#)
        else {
            Issue.record("bad uuid")
            return
        }
        #expect(uuid.codingPath.map(\.stringValue) == ["id"])
        guard case .dataCorrupted(let date)? = error(good.replacingOccurrences(of: "2026-11-23T", with: "x") + #", "list": []"#)
        else {
            Issue.record("bad date")
            return
        }
        #expect(date.codingPath.map(\.stringValue) == ["at"])
        guard case .dataCorrupted? = error(good.replacingOccurrences(of: "\"count\": 1", with: "\"count\": 1e40") + #", "list": []"#)
        else {
            Issue.record("overflowing count")
            return
        }
    }

    @Test("UUID text: either case, exact shape only")
    func uuidText() {
        let uuid = UUID()
        #expect(UUID(text: uuid.uuidString) == uuid)
        #expect(UUID(text: uuid.uuidString.lowercased()) == uuid)
        for bad in [
            "", String(uuid.uuidString.dropLast()), uuid.uuidString + "0", uuid.uuidString.replacingOccurrences(of: "-", with: "+"),
            "g" + uuid.uuidString.dropFirst(),
        ] {
            #expect(UUID(text: bad) == nil, "\(bad)")
        }
    }

    static func fastError<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) -> DecodingError? {
        do {
            _ = try decoder.decode(type, from: bytes)
            return nil
        } catch let error as DecodingError {
            return error
        } catch {
            return nil
        }
    }

    /// Any JSON value, to tell a malformed document from a well-formed one of another shape.
    enum JSONValueProbe: Decodable {
        case value
        init(from decoder: any Decoder) throws {
            if var array = try? decoder.unkeyedContainer() {
                while !array.isAtEnd { _ = try array.decode(JSONValueProbe.self) }
            } else if let object = try? decoder.container(keyedBy: AnyKey.self) {
                for key in object.allKeys { _ = try object.decode(JSONValueProbe.self, forKey: key) }
            }
            self = .value
        }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
