import Foundation

/// The encodings of a message's parts (pure functions): header text made safe, RFC 2047 encoded
/// words, folding at 76 characters, quoted-printable bodies and the RFC 5322 date.
extension MIMEMessage {
    /// The longest line written, folding included (RFC 2045's limit for encoded bodies, kept for
    /// headers too).
    static let lineLimit = 76

    /// `text` as a header may hold it: every control character (CR, LF, NUL, tab, DEL, C1) and
    /// Unicode line or paragraph separator becomes a space, runs of spaces become one, and the
    /// ends are trimmed. This is the guard against header injection: no value can end a header
    /// line or start another.
    public static func headerText(_ text: String) -> String {
        var result = ""
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            let category = scalar.properties.generalCategory
            let isBreak = category == .control || category == .lineSeparator || category == .paragraphSeparator
            if isBreak || scalar.properties.isWhitespace {
                pendingSpace = !result.isEmpty
                continue
            }
            if pendingSpace {
                result.append(" ")
                pendingSpace = false
            }
            result.unicodeScalars.append(scalar)
        }
        return result
    }

    /// `Tue, 01 Dec 2026 10:00:00 +0000` (RFC 5322 3.3), always in UTC, with English names
    /// whatever the process's locale.
    public static func rfc5322Date(_ date: Date) -> String {
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) +0000"
    }

    /// `name: word word …`, folded before a word that would take the line past 76 characters.
    /// Unfolding (removing each CRLF) gives back the words joined by single spaces.
    static func foldedHeader(_ name: String, _ words: [String]) -> [String] {
        var lines: [String] = []
        var line = name + ":"
        for word in words {
            if line.utf8.count + 1 + word.utf8.count > lineLimit && line != name + ":" {
                lines.append(line)
                line = ""
            }
            line += " " + word
        }
        if words.isEmpty { line += " " }
        lines.append(line)
        return lines
    }

    /// A subject as header words: plain ASCII words when that reads back the same, otherwise
    /// encoded words (non-ASCII, a `=?` a reader would try to decode, or a word too long to fold).
    static func subjectWords(_ subject: String) -> [String] {
        let text = headerText(subject)
        let words = text.split(separator: " ").map(String.init)
        let plain = text.unicodeScalars.allSatisfy { $0.isASCII } && !text.contains("=?") && words.allSatisfy { $0.utf8.count <= 60 }
        return plain ? words : encodedWords(text)
    }

    /// A mailbox as header words: its display name (atoms as they are, other ASCII as a quoted
    /// string, anything else as encoded words) and then `<address>`.
    static func mailboxWords(_ mailbox: EmailMailbox) -> [String] {
        guard let name = mailbox.displayName else { return [mailbox.address] }
        let atext = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-/=?^_`{|}~ ")
        var words: [String]
        if name.allSatisfy({ atext.contains($0) }) && !name.contains("=?") {
            words = name.split(separator: " ").map(String.init)
        } else if name.unicodeScalars.allSatisfy({ $0.isASCII }) && !name.contains("=?") {
            let escaped = name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            // Split at spaces only to fold: FWS inside a quoted string unfolds to the same space.
            words = ("\"" + escaped + "\"").split(separator: " ").map(String.init)
        } else {
            words = encodedWords(name)
        }
        return words + ["<\(mailbox.address)>"]
    }

    /// `text` as RFC 2047 `B` encoded words of UTF-8 (`=?UTF-8?B?…?=`), each at most 64 characters
    /// (so `Subject: ` and one word fit in 76) and never splitting a character between two words.
    /// A reader joins adjacent encoded words without the space between them.
    static func encodedWords(_ text: String) -> [String] {
        let maximumBytes = 39  // 52 base64 characters, 64 with `=?UTF-8?B?` and `?=`
        var chunks: [[UInt8]] = []
        var current: [UInt8] = []
        func add(_ piece: [UInt8]) {
            if current.count + piece.count > maximumBytes && !current.isEmpty {
                chunks.append(current)
                current = []
            }
            current += piece
        }
        for character in text {
            let bytes = Array(String(character).utf8)
            if bytes.count <= maximumBytes {
                add(bytes)
            } else {
                // A cluster longer than a word (a long emoji sequence): split between its scalars.
                for scalar in character.unicodeScalars { add(Array(String(scalar).utf8)) }
            }
        }
        if !current.isEmpty { chunks.append(current) }
        return chunks.map { "=?UTF-8?B?" + Data($0).base64EncodedString() + "?=" }
    }

    /// `text` in quoted-printable (RFC 2045 6.7) of its UTF-8, as lines without their CRLF: line
    /// breaks in the text (LF, CRLF or CR) become CRLF; a line is cut with a soft break (`=`) so
    /// that none passes 76 characters; `=`, bytes outside printable ASCII, a space or tab at the
    /// end of a line, and a `.` or `From ` at the start of one are escaped (the last two so
    /// neither SMTP's end-of-data nor an mbox `From ` line can ever be read into a body).
    public static func quotedPrintable(_ text: String) -> [String] {
        // Bytes in, bytes out: every message's bodies pass here, and a String per byte was the
        // larger part of composing one.
        let bytes = Array(text.utf8)
        var sourceLines: [Range<Int>] = []
        var start = 0
        var index = 0
        while index < bytes.count {
            guard bytes[index] == 0x0D || bytes[index] == 0x0A else {
                index += 1
                continue
            }
            sourceLines.append(start..<index)
            if bytes[index] == 0x0D && index + 1 < bytes.count && bytes[index + 1] == 0x0A { index += 1 }
            index += 1
            start = index
        }
        if start < bytes.count || sourceLines.isEmpty { sourceLines.append(start..<bytes.count) }

        let hex = Array("0123456789ABCDEF".utf8)
        let from = Array("From ".utf8)
        var output: [String] = []
        output.reserveCapacity(sourceLines.count + bytes.count / (lineLimit - 1))
        var line: [UInt8] = []
        line.reserveCapacity(lineLimit)
        for range in sourceLines {
            line.removeAll(keepingCapacity: true)
            for position in range {
                let byte = bytes[position]
                let isLast = position == range.upperBound - 1
                var literal: Bool
                switch byte {
                case 0x20, 0x09: literal = !isLast
                case 0x3D: literal = false
                case 0x21...0x7E: literal = true
                default: literal = false
                }
                // Room for the byte and, unless it ends the line, a soft break after it.
                let room = isLast ? lineLimit : lineLimit - 1
                if line.count + (literal ? 1 : 3) > room {
                    line.append(0x3D)
                    output.append(String(decoding: line, as: UTF8.self))
                    line.removeAll(keepingCapacity: true)
                }
                if line.isEmpty && (byte == 0x2E || (byte == 0x46 && bytes[position..<range.upperBound].starts(with: from))) {
                    literal = false
                }
                if literal {
                    line.append(byte)
                } else {
                    line += [0x3D, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
                }
            }
            output.append(String(decoding: line, as: UTF8.self))
        }
        return output
    }
}
