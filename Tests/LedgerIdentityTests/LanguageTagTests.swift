import LedgerIdentity
import Testing

@Suite("Language tags an account's messages are filed under")
struct LanguageTagTests {
    @Test("plain tags come back in their usual case; a script or variant falls back to the language")
    func normalized() {
        #expect(LanguageTag.normalize("EN") == "en")
        #expect(LanguageTag.normalize("pt-br") == "pt-BR")
        #expect(LanguageTag.normalize("es-419") == "es-419")
        #expect(LanguageTag.normalize("zh-Hant") == "zh")
        #expect(LanguageTag.normalize("zh-Hant-tw") == "zh-TW")
        #expect(LanguageTag.normalize("en-GB-oxendict") == "en-GB")
        #expect(LanguageTag.normalize("fil") == "fil")
    }

    @Test("anything that could name another file, or is no tag at all, is nothing")
    func refused() {
        for raw in ["", "e", "english", "../en", "en/../../x", "en_GB", "de-", "en-GB-", "ελ", String(repeating: "a", count: 40), "*"] {
            #expect(LanguageTag.normalize(raw) == nil, "\(raw)")
        }
        #expect(LanguageTag.normalize(nil) == nil)
    }
}
