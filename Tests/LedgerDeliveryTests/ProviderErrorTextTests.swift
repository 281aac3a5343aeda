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
            // Forms a second review found surviving: RFC 7009's `token=`, names ending in a secret's
            // name, cookies, quoted values with spaces, SMTP AUTH, URL-encoded headers, `@` in a password.
            ("revoke failed for token=r.apple.0123456789&client_id=x", "r.apple.0123456789"),
            ("oauth_token=abcdef123456 and user.password=hunter2hunter2", "abcdef123456"),
            ("oauth_token=abcdef123456 and user.password=hunter2hunter2", "hunter2hunter2"),
            ("Cookie: session=s3ss10n-value; path=/", "s3ss10n-value"),
            (#"{"password": "hunter two words", "client_secret":"ab\"cd-ef"}"#, "two words"),
            (#"{"password": "hunter two words", "client_secret":"ab\"cd-ef"}"#, "cd-ef"),
            ("535 AUTH PLAIN AGFuYQBzM2NyM3Q= rejected", "AGFuYQBzM2NyM3Q="),
            ("Authorization%3A%20Basic%20QUMxMjM0NTY3ODk6dG9rZW4%3D%3D", "QUMxMjM0NTY3ODk6dG9rZW4"),
            ("GET https://AC99:p@ss@api.example.test/x", "ss@api"),
        ]
        for (said, gone) in cases {
            let text = ProviderErrorText.sanitized(said)
            #expect(!text.contains(gone), "\(gone) in \(text)")
            #expect(text.contains("<redacted>"), "\(text)")
        }
        #expect(ProviderErrorText.sanitized("token twilio-auth-5f2c leaked", secrets: ["twilio-auth-5f2c"]) == "token <redacted> leaked")
        #expect(ProviderErrorText.sanitized("TWILIO-AUTH-5F2C", secrets: ["twilio-auth-5f2c"]) == "<redacted>")
        // Redacted before the cut: a secret straddling the 300th character is not kept in part.
        let straddling = String(repeating: "x", count: 290) + " twilio-auth-5f2c-0123456789 tail"
        #expect(!ProviderErrorText.sanitized(straddling, secrets: ["twilio-auth-5f2c-0123456789"]).contains("twilio-auth"))
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
