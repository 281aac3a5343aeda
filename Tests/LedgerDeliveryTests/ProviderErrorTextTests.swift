import LedgerDelivery
import Testing

@Suite("Provider error text: credentials redacted, one line")
struct ProviderErrorTextTests {
    @Test("credentials go in every form: the secret itself, Basic, Bearer, an Authorization header, key=value fields, a URL's user")
    func credentials() {
        let cases: [(said: String, gone: String)] = [
            ("Authorization: Basic QUMxMjM0NTY3ODk6dG9rZW4tNWYyYw== was refused", "QUMxMjM0NTY3ODk6dG9rZW4tNWYyYw=="),
            ("upstream said: bearer eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.sig", "eyJhbGciOiJFUzI1NiJ9"),
            ("proxy-authorization=Digest username-and-more", "username-and-more"),
            (#"{"auth_token": "tok-12345", "client_secret":"s3cr3t-value"}"#, "tok-12345"),
            (#"{"auth_token": "tok-12345", "client_secret":"s3cr3t-value"}"#, "s3cr3t-value"),
            ("GET https://AC99:hunter22@api.example.test/2010-04-01 failed", "hunter22"),
            ("password=correct-horse&user=ana", "correct-horse"),
        ]
        for (said, gone) in cases {
            let text = ProviderErrorText.sanitized(said)
            #expect(!text.contains(gone), "\(gone) in \(text)")
            #expect(text.contains("<redacted>"), "\(text)")
        }
        #expect(ProviderErrorText.sanitized("token twilio-auth-5f2c leaked", secrets: ["twilio-auth-5f2c"]) == "token <redacted> leaked")
        // Ordinary words stay: "basic" or "token" in a sentence are not credentials.
        #expect(
            ProviderErrorText.sanitized("The 'To' number is not a valid phone number.") == "The 'To' number is not a valid phone number.")
    }

    @Test("CR, LF, ESC, C1 controls and line separators become spaces; bidi overrides go; the text is cut at 300")
    func oneLine() {
        let said = "refused\r\n2026-12-06T10:00:00+0000 info ledger: forged\u{1B}[31m\u{9B}2J\u{2028}next\u{202E}lapa"
        let text = ProviderErrorText.sanitized(said)
        #expect(!text.unicodeScalars.contains { $0.properties.generalCategory == .control || $0.value == 0x2028 || $0.value == 0x202E })
        #expect(text.hasPrefix("refused  2026-12-06T10:00:00+0000 info ledger: forged [31m 2J next"))
        let long = ProviderErrorText.sanitized(String(repeating: "x", count: 1000))
        #expect(long.count == ProviderErrorText.maximumLength + 1 && long.hasSuffix("…"))
    }
}
