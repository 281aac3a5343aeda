import Foundation
import LedgerCore
import Testing

@Suite("JSON object filter")
struct JSONObjectFilterTests {
    func filter(_ text: String, dropping names: Set<String> = ["secret"]) -> String? {
        JSONObjectFilter.filtered(Array(text.utf8), dropping: { names.contains(String($0)) }).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("drops only the named top-level fields and keeps the rest byte for byte")
    func drops() {
        #expect(filter(#"{"a":1,"secret":"x","b":{"secret":[1,2.5e-3,true,null]}}"#) == #"{"a":1,"b":{"secret":[1,2.5e-3,true,null]}}"#)
        #expect(filter(#"{"secret":"x"}"#) == "{}")
        #expect(filter(#" { "secret" : "x" , "z" : "q\"\u00e9" } "#) == #"{"z":"q\"\u00e9"}"#)
        #expect(filter("{}") == "{}")
        #expect(filter(#"{"név":"ő"}"#) == #"{"név":"ő"}"#)
    }

    @Test(
        "anything but one well-formed object is refused",
        arguments: [
            "", "[]", "\"text\"", "{", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{\"a\":1} x", "{\"a\":tru}", "{\"a\":01}",
            "{\"a\":\"\\x\"}", "{\"a\":\"\u{01}\"}", "{\"a\":[1,]}", "{\"a\":-}", "{\"a\":1.}", "{a:1}",
        ])
    func refuses(_ text: String) {
        #expect(filter(text) == nil)
    }

    @Test("invalid UTF-8 in a string and excessive nesting are refused")
    func refusesBytes() {
        #expect(JSONObjectFilter.filtered([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D], dropping: { _ in false }) == nil)
        let deep = "{\"a\":" + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}"
        #expect(filter(deep) == nil)
    }

    @Test("ids in lower case: a UUID string under …_id, an array of them under …_ids; nothing else is touched")
    func lowercasingIDs() {
        func lowered(_ text: String) -> String? {
            JSONObjectFilter.filtered(Array(text.utf8), dropping: { _ in false }, lowercasingIDs: true).map {
                String(decoding: $0, as: UTF8.self)
            }
        }
        let id = "9F1C2A9E-3B7D-4C1E-9A55-2D8E7F0B1C34"
        let low = id.lowercased()
        #expect(lowered(#"{"session_id":"\#(id)","n":1}"#) == #"{"session_id":"\#(low)","n":1}"#)
        #expect(lowered(#"{"link_ids":["\#(id)", "\#(id)"]}"#) == #"{"link_ids":["\#(low)", "\#(low)"]}"#)
        #expect(lowered(#"{"grant_ids":[]}"#) == #"{"grant_ids":[]}"#)
        // Not an id field, not a UUID, or an array with anything else in it: copied as written.
        #expect(lowered(#"{"ref":"\#(id)"}"#) == #"{"ref":"\#(id)"}"#)
        #expect(lowered(#"{"client_id":"ABC-DEF.apps.example"}"#) == #"{"client_id":"ABC-DEF.apps.example"}"#)
        #expect(lowered(#"{"x_id":"\#(id)X"}"#) == #"{"x_id":"\#(id)X"}"#)
        #expect(lowered(#"{"x_ids":["\#(id)","ABC"]}"#) == #"{"x_ids":["\#(id)","ABC"]}"#)
        #expect(lowered(#"{"x_id":null,"id":"\#(id)"}"#) == #"{"x_id":null,"id":"\#(id)"}"#)
        // Off by default: the filter copies values byte for byte.
        #expect(filter(#"{"session_id":"\#(id)"}"#) == #"{"session_id":"\#(id)"}"#)
    }

    @Test("appending leaves the output untouched when the bytes are not one object")
    func appendRollsBack() {
        var output = Array("prefix:".utf8)
        #expect(!JSONObjectFilter.append(Array(#"{"a":1,"b":[}"#.utf8), to: &output, dropping: { _ in false }))
        #expect(String(decoding: output, as: UTF8.self) == "prefix:")
        #expect(
            JSONObjectFilter.append(Array(#"{"a":1,"x_sha256":"y"}"#.utf8), to: &output, dropping: { $0.elementsEqual("x_sha256".utf8) }))
        #expect(String(decoding: output, as: UTF8.self) == #"prefix:{"a":1}"#)
    }

}

@Suite("Byte output")
struct ByteOutputTests {
    @Test("strings are escaped for JSON: quotes, backslashes and control characters, the rest as UTF-8")
    func jsonStrings() {
        var output: [UInt8] = []
        output.appendJSONString("a\"b\\c\n\t\u{01}\u{1f}é/")
        #expect(String(decoding: output, as: UTF8.self) == #""a\"b\\c\n\t\u0001\u001fé/""#)
        output.removeAll()
        output.appendJSONString("plain")
        output.appendJSONString("")
        #expect(String(decoding: output, as: UTF8.self) == #""plain""""#)
    }

    @Test("decimals are zero-padded to their width and negative numbers keep their sign")
    func decimals() {
        var output: [UInt8] = []
        output.appendDecimal(Int64(7), width: 2)
        output.appendDecimal(Int64(0))
        output.appendDecimal(Int64(-42), width: 4)
        output.appendDecimal(UInt64.max)
        output.appendDecimal(Int64(123_456), width: 6)
        #expect(String(decoding: output, as: UTF8.self) == "070-004218446744073709551615123456")
    }

    @Test("base64url matches Foundation's base64 with the URL alphabet and no padding", arguments: 0..<8)
    func base64URL(length: Int) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 251) }
        let expected = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(Base64URL.encode(bytes) == expected)
        #expect(Base64URL.decode(expected) == bytes)
    }

    @Test("a UUID's lower-case form is Foundation's, lower-cased")
    func uuid() {
        for _ in 0..<20 {
            let id = UUID()
            #expect(id.lowercased == id.uuidString.lowercased())
        }
    }
}
