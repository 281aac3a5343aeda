import Testing

@testable import LedgerServer

/// `Accept-Language` as the service reads it (docs/accounts.md "Languages"): by `q`, strict
/// qvalues, and never more than `AcceptLanguage.readLimit` of it.
@Suite("Accept-Language")
struct AcceptLanguageTests {
    @Test("the most preferred of ka, en, ru by q, then order; region kept; q=0 refused; a bad q skips its entry")
    func preference() {
        let cases: [(String?, String?)] = [
            ("fr-FR, en;q=0.5, ru;q=0.8", "ru"), ("ka-ge,ka;q=0.9", "ka-GE"), ("en;q=0.5, ru;q=0.5", "en"),
            ("ru;q=0, en;q=0.1", "en"), ("ru;q=0", nil), ("de, fr", nil), (nil, nil), ("", nil), (" ; ,;", nil),
            ("ru;q=1.5, en;q=0.2", "en"), ("ru;q=inf, en;q=0.2", "en"), ("ru;q=1e3, en;q=0.2", "en"), ("ru;q=0.0001, en;q=0.2", "en"),
            ("ru;Q=1.000", "ru"), ("  ru  ;  q=0.5 , en;q=0.4", "ru"), ("\tka\t", "ka"), ("ka;level=1", nil),
        ]
        for (header, expected) in cases {
            #expect(AcceptLanguage.preferredSupported(header) == expected, "\(header ?? "nil")")
        }
    }

    @Test("a huge header is read only as far as its first 512 bytes and 16 entries")
    func bounded() {
        // The language the sender wants comes after the limit: it is not read.
        #expect(AcceptLanguage.preferredSupported(String(repeating: "de,", count: 16) + "ka") == nil)
        #expect(AcceptLanguage.preferredSupported(String(repeating: "de,", count: 15) + "ka") == "ka")
        #expect(AcceptLanguage.preferredSupported(String(repeating: " ", count: 511) + "ka") == nil)
        #expect(AcceptLanguage.preferredSupported("ka;" + String(repeating: "a;", count: 40_000) + "q=1") == nil)
        #expect(AcceptLanguage.preferredSupported(String(repeating: "x", count: 80 * 1024)) == nil)
    }
}
