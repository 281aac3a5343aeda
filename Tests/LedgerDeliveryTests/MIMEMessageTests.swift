import Foundation
import Testing

@testable import LedgerDelivery

@Suite("MIME message composition")
struct MIMEMessageTests {
    static let from = try! EmailMailbox.parse("321Fit <no-reply@321.fit>")
    static let to = try! EmailMailbox(address: "ana@example.com")

    static func message(subject: String = "Verify your email", text: String = "Hello", html: String = "<p>Hello</p>") -> MIMEMessage {
        MIMEMessage(
            from: from, to: to, replyTo: try! EmailMailbox(address: "support@321.fit"), subject: subject, text: text, html: html,
            date: Date(timeIntervalSince1970: 1_796_083_200))
    }

    static func lines(_ message: MIMEMessage) -> [String] {
        let text = String(decoding: message.encoded(), as: UTF8.self)
        #expect(text.hasSuffix("\r\n"))
        return text.components(separatedBy: "\r\n").dropLast()
    }

    static func headers(_ message: MIMEMessage) -> [String] {
        Array(lines(message).prefix { !$0.isEmpty })
    }

    /// The value of header `name`, unfolded.
    static func header(_ name: String, in message: MIMEMessage) -> String? {
        var unfolded: [String] = []
        for line in headers(message) {
            if line.hasPrefix(" ") { unfolded[unfolded.count - 1] += line } else { unfolded.append(line) }
        }
        return unfolded.first { $0.lowercased().hasPrefix(name.lowercased() + ": ") }.map { String($0.dropFirst(name.count + 2)) }
    }

    @Test("the headers a mail client needs, and no List-Unsubscribe")
    func headers() {
        let message = Self.message()
        #expect(Self.header("Date", in: message) == "Tue, 01 Dec 2026 00:00:00 +0000")
        #expect(Self.header("From", in: message) == "321Fit <no-reply@321.fit>")
        #expect(Self.header("Reply-To", in: message) == "support@321.fit")
        #expect(Self.header("To", in: message) == "ana@example.com")
        #expect(Self.header("Subject", in: message) == "Verify your email")
        #expect(Self.header("MIME-Version", in: message) == "1.0")
        #expect(Self.header("Message-ID", in: message)?.hasSuffix("@321.fit>") == true)
        #expect(Self.header("Content-Type", in: message) == "multipart/alternative; boundary=\"\(message.boundary)\"")
        #expect(Self.header("List-Unsubscribe", in: message) == nil)
    }

    @Test("multipart/alternative: text then HTML, UTF-8, quoted-printable, closed by the final boundary")
    func parts() {
        let message = Self.message(text: "Dein Code: 482915\nGrüße", html: "<p>Grüße</p>")
        let lines = Self.lines(message)
        let boundary = "--" + message.boundary
        #expect(lines.filter { $0 == boundary }.count == 2)
        #expect(lines.last == boundary + "--")
        let bodies = lines.split(separator: boundary).dropFirst()
        let text = Array(bodies.first!)
        #expect(text.prefix(3) == ["Content-Type: text/plain; charset=UTF-8", "Content-Transfer-Encoding: quoted-printable", ""])
        #expect(Self.decodeQuotedPrintable(Array(text.dropFirst(3))) == "Dein Code: 482915\nGr\u{FC}\u{DF}e")
        let html = Array(bodies.dropFirst().first!.prefix { $0 != boundary + "--" })
        #expect(html.first == "Content-Type: text/html; charset=UTF-8")
        #expect(Self.decodeQuotedPrintable(Array(html.dropFirst(3))) == "<p>Gr\u{FC}\u{DF}e</p>")
    }

    @Test("every line is at most 76 characters and ends with CRLF, whatever the text")
    func lineLengths() {
        let long = String(repeating: "Ä verification link https://321.fit/verify?token=\(String(repeating: "x", count: 90)) ", count: 5)
        let message = Self.message(subject: String(repeating: "Bestätigen Sie Ihre E-Mail-Adresse ", count: 6), text: long, html: long)
        let bytes = message.encoded()
        #expect(!zip(bytes, bytes.dropFirst()).contains { $0.0 != 13 && $0.1 == 10 }, "no bare LF")
        #expect(Self.lines(message).allSatisfy { $0.utf8.count <= 76 })
    }

    @Test("quoted-printable round-trips text of any bytes and escapes what SMTP or mbox could misread")
    func quotedPrintable() {
        let samples = [
            "plain", "trailing space ", "trailing tab\t", "a=b", ".starts with a dot", "From the start", "日本語のテキスト", "emoji 🎉👩‍👩‍👧",
            String(repeating: "=", count: 200), String(repeating: "é", count: 100), "line one\r\nline two\rline three\n\nafter a gap",
            String(repeating: "a", count: 75) + " " + String(repeating: "b", count: 80) + " ",
        ]
        for sample in samples {
            let encoded = MIMEMessage.quotedPrintable(sample)
            #expect(encoded.allSatisfy { $0.utf8.count <= 76 && $0.utf8.allSatisfy { (32...126).contains($0) } })
            #expect(encoded.allSatisfy { !$0.hasPrefix(".") && !$0.hasPrefix("From ") })
            #expect(encoded.allSatisfy { !$0.hasSuffix(" ") && !$0.hasSuffix("\t") })
            let expected = sample.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
            #expect(Self.decodeQuotedPrintable(encoded) == expected)
        }
    }

    @Test("a non-ASCII subject becomes RFC 2047 encoded words, folded, that decode to the subject")
    func encodedSubject() throws {
        let subject = "Bestätige deine E-Mail-Adresse für 321Fit ✅ — es dauert nur einen Moment, versprochen 🎉"
        let message = Self.message(subject: subject)
        let lines = Self.headers(message)
        let start = try #require(lines.firstIndex { $0.hasPrefix("Subject: ") })
        let folded = [lines[start]] + lines[(start + 1)...].prefix { $0.hasPrefix(" ") }
        #expect(folded.count > 1, "folded over several lines")
        let words = folded.map { $0.hasPrefix("Subject: ") ? String($0.dropFirst(9)) : String($0.dropFirst()) }
            .flatMap { $0.split(separator: " ").map(String.init) }
        #expect(words.allSatisfy { $0.hasPrefix("=?UTF-8?B?") && $0.hasSuffix("?=") && $0.utf8.count <= 75 })
        #expect(Self.decodeEncodedWords(words) == subject)
    }

    @Test("an ASCII subject stays readable; one with =? or a very long word is encoded")
    func asciiSubject() {
        #expect(MIMEMessage.subjectWords("Your 321Fit code") == ["Your", "321Fit", "code"])
        #expect(MIMEMessage.subjectWords("price =?x?=").allSatisfy { $0.hasPrefix("=?UTF-8?B?") })
        #expect(MIMEMessage.subjectWords(String(repeating: "x", count: 100)).allSatisfy { $0.hasPrefix("=?UTF-8?B?") })
    }

    @Test("CR and LF in a subject or a display name never start another header")
    func headerInjection() throws {
        let injected = "Hello\r\nBcc: victim@example.net\r\n\r\nbody"
        let sender = try EmailMailbox(address: "no-reply@321.fit", displayName: "Evil\r\nBcc: victim@example.net")
        var message = Self.message(subject: injected)
        message.from = sender
        let headers = Self.headers(message)
        #expect(!headers.contains { $0.lowercased().hasPrefix("bcc:") })
        #expect(headers.allSatisfy { !$0.contains("\r") && !$0.contains("\n") })
        #expect(Self.header("Subject", in: message) == "Hello Bcc: victim@example.net body")
        #expect(sender.displayName == "Evil Bcc: victim@example.net")
        #expect(MIMEMessage.headerText("a\u{2028}b\u{0}c\u{85}d\u{7F}e\tf") == "a b c d e f")
    }

    @Test("an address with a line break, a space or angle brackets is refused")
    func addresses() {
        for bad in [
            "ana@example.com\r\nBcc: x@example.net", "ana@example.com>", "<ana@example.com", "ana @example.com", "ana", "@example.com",
            "ana@", "ana@@example.com", "a,b@example.com", "ana@example.com\n", "ana@.example.com", "ana@example..com",
        ] {
            #expect(throws: EmailMailboxError.self) { try EmailMailbox(address: bad) }
        }
        #expect((try? EmailMailbox(address: "jörg+tag@bücher.example"))?.address == "jörg+tag@bücher.example")
        #expect(!EmailMailboxError().description.contains("@"))
    }

    @Test("LEDGER_EMAIL_FROM as Name <address>, a quoted name, or a bare address")
    func parseMailbox() throws {
        let plain = try EmailMailbox.parse("321Fit <no-reply@321.fit>")
        #expect(plain.displayName == "321Fit" && plain.address == "no-reply@321.fit" && plain.domain == "321.fit")
        let quoted = try EmailMailbox.parse(#""321Fit, \"Support\"" <support@321.fit>"#)
        #expect(quoted.displayName == #"321Fit, "Support""#)
        #expect(MIMEMessage.mailboxWords(quoted) == [#""321Fit,"#, #"\"Support\"""#, "<support@321.fit>"])
        #expect(try EmailMailbox.parse("  support@321.fit ").displayName == nil)
        let accented = try EmailMailbox.parse("Équipe 321Fit <no-reply@321.fit>")
        let words = MIMEMessage.mailboxWords(accented)
        #expect(words.last == "<no-reply@321.fit>")
        #expect(Self.decodeEncodedWords(Array(words.dropLast())) == "Équipe 321Fit")
        #expect(throws: EmailMailboxError.self) { try EmailMailbox.parse("321Fit <no-reply>") }
    }

    @Test("Message-IDs are unique and at the sender's domain")
    func messageIDs() {
        let ids = (0..<1000).map { _ in MIMEMessage.newMessageID(domain: "321.fit") }
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.hasSuffix("@321.fit") && !$0.contains("<") })
        #expect(Self.message().messageID != Self.message().messageID)
    }

    @Test("dates in RFC 5322 form, in English and UTC")
    func dates() {
        #expect(MIMEMessage.rfc5322Date(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 +0000")
        #expect(MIMEMessage.rfc5322Date(Date(timeIntervalSince1970: 1_709_210_096.9)) == "Thu, 29 Feb 2024 12:34:56 +0000")
    }

    // MARK: - Decoders, as a mail client reads

    static func decodeQuotedPrintable(_ lines: [String]) -> String {
        var bytes: [UInt8] = []
        for (index, line) in lines.enumerated() {
            var utf8 = Array(line.utf8)
            let soft = utf8.last == UInt8(ascii: "=")
            if soft { utf8.removeLast() }
            var position = 0
            while position < utf8.count {
                if utf8[position] == UInt8(ascii: "="), position + 2 < utf8.count,
                    let byte = UInt8(String(decoding: utf8[(position + 1)...(position + 2)], as: UTF8.self), radix: 16)
                {
                    bytes.append(byte)
                    position += 3
                } else {
                    bytes.append(utf8[position])
                    position += 1
                }
            }
            if !soft && index < lines.count - 1 { bytes.append(10) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func decodeEncodedWords(_ words: [String]) -> String {
        var bytes: [UInt8] = []
        for word in words {
            let payload = word.dropFirst("=?UTF-8?B?".count).dropLast(2)
            bytes += Data(base64Encoded: String(payload)) ?? Data()
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
