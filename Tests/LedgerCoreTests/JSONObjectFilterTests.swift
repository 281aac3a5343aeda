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

    @Test("anything but one well-formed object is refused", arguments: [
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

    @Test("strings are escaped for JSON")
    func escapes() {
        var output: [UInt8] = []
        JSONObjectFilter.appendString("a\"b\\c\n\u{01}é", to: &output)
        #expect(String(decoding: output, as: UTF8.self) == #""a\"b\\c\u000a\u0001é""#)
    }
}
