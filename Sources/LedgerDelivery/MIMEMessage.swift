import Foundation

/// One transactional email as it goes on the wire (RFC 5322 with MIME): a
/// `multipart/alternative` of a plain-text and an HTML part, both UTF-8 and quoted-printable.
///
/// Headers: `Date`, `From`, `Reply-To`, `To`, `Subject` (RFC 2047 encoded words when not plain
/// ASCII), `Message-ID`, `MIME-Version`, `Auto-Submitted` (RFC 3834: no out-of-office replies to
/// a code) and `Content-Type`; no `List-Unsubscribe`: these are not newsletters. Every line ends
/// with CRLF and is at most 76 characters. Composed here rather than by libcurl's MIME API, so it
/// is a pure function that the tests read byte for byte.
public struct MIMEMessage: Sendable, Equatable {
    public var from: EmailMailbox
    public var to: EmailMailbox
    public var replyTo: EmailMailbox?
    /// Control characters (CR and LF among them) become spaces: a subject never adds a header.
    public var subject: String
    public var text: String
    public var html: String
    public var date: Date
    /// Without the angle brackets: `<random>@<the sender's domain>`.
    public var messageID: String
    /// Starts with `=_`, which quoted-printable never writes, so no body line can match it.
    public var boundary: String

    public init(
        from: EmailMailbox, to: EmailMailbox, replyTo: EmailMailbox? = nil, subject: String, text: String, html: String,
        date: Date = Date(), messageID: String? = nil, boundary: String? = nil
    ) {
        self.from = from
        self.to = to
        self.replyTo = replyTo
        self.subject = subject
        self.text = text
        self.html = html
        self.date = date
        self.messageID = messageID ?? Self.newMessageID(domain: from.domain)
        self.boundary = boundary ?? "=_ledger_" + Self.randomHex(16)
    }

    /// A `Message-ID` no other message has: 128 random bits (and the time, for a reader of logs)
    /// at the sender's domain (RFC 5322 3.6.4).
    public static func newMessageID(domain: String) -> String {
        let seconds = UInt64(max(0, Date().timeIntervalSince1970))
        return "\(String(seconds, radix: 36)).\(randomHex(16))@\(domain)"
    }

    /// The message, CRLF line ends, ready for SMTP's DATA (libcurl adds the dot-stuffing).
    public func encoded() -> [UInt8] {
        var lines: [String] = []
        lines.append("Date: " + Self.rfc5322Date(date))
        lines += Self.foldedHeader("From", Self.mailboxWords(from))
        if let replyTo {
            lines += Self.foldedHeader("Reply-To", Self.mailboxWords(replyTo))
        }
        lines += Self.foldedHeader("To", Self.mailboxWords(to))
        lines += Self.foldedHeader("Subject", Self.subjectWords(subject))
        lines += Self.foldedHeader("Message-ID", ["<\(messageID)>"])
        lines.append("MIME-Version: 1.0")
        lines.append("Auto-Submitted: auto-generated")
        lines.append("Content-Type: multipart/alternative;")
        lines.append(" boundary=\"\(boundary)\"")
        lines.append("")
        for (type, body) in [("text/plain", text), ("text/html", html)] {
            lines.append("--" + boundary)
            lines.append("Content-Type: \(type); charset=UTF-8")
            lines.append("Content-Transfer-Encoding: quoted-printable")
            lines.append("")
            lines += Self.quotedPrintable(body)
        }
        lines.append("--" + boundary + "--")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lines.reduce(0) { $0 + $1.utf8.count + 2 })
        for line in lines {
            bytes += line.utf8
            bytes += [13, 10]
        }
        return bytes
    }

    static func randomHex(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return String(byte >> 4, radix: 16) + String(byte & 0x0F, radix: 16)
        }.joined()
    }
}
