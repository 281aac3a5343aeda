/// The JSON grammar (RFC 8259) as a cursor over bytes that checks and skips one token or value
/// at a time without allocating: `JSONObjectFilter` copies what it skips, `JSONNode` builds a
/// tree from it. Strings are checked for escapes and UTF-8; nesting is bounded.
struct JSONScanner {
    /// Nesting deeper than this is refused rather than recursed into.
    static let maximumDepth = 64

    let bytes: [UInt8]
    var index = 0
    /// Whether the string `skipString` passed last had escapes (else its bytes are its text).
    private(set) var lastStringHadEscapes = false

    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
    }

    mutating func atEndAfterWhitespace() -> Bool {
        skipWhitespace()
        return index == bytes.count
    }

    /// A string literal, with its escapes checked and its UTF-8 validated.
    mutating func skipString() -> Bool {
        guard peek() == UInt8(ascii: "\"") else { return false }
        index += 1
        let start = index
        var asciiOnly = true
        lastStringHadEscapes = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                // Validating UTF-8 costs a String; ASCII (nearly every payload) needs none.
                let valid = asciiOnly || String(validating: bytes[start..<index], as: UTF8.self) != nil
                index += 1
                return valid
            }
            if byte >= 0x80 { asciiOnly = false }
            if byte < 0x20 { return false }
            if byte == UInt8(ascii: "\\") {
                lastStringHadEscapes = true
                index += 1
                guard let escaped = peek() else { return false }
                if escaped == UInt8(ascii: "u") {
                    guard index + 4 < bytes.count, bytes[(index + 1)...(index + 4)].allSatisfy(\.isHexDigit) else { return false }
                    index += 4
                } else {
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        break
                    default:
                        return false
                    }
                }
            }
            index += 1
        }
        return false
    }

    mutating func skipValue(depth: Int) -> Bool {
        guard depth < Self.maximumDepth, let first = peek() else { return false }
        switch first {
        case UInt8(ascii: "\""):
            return skipString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let isObject = first == UInt8(ascii: "{")
            let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            index += 1
            skipWhitespace()
            if peek() == close {
                index += 1
                return true
            }
            while true {
                skipWhitespace()
                if isObject {
                    guard skipString() else { return false }
                    skipWhitespace()
                    guard peek() == UInt8(ascii: ":") else { return false }
                    index += 1
                    skipWhitespace()
                }
                guard skipValue(depth: depth + 1) else { return false }
                skipWhitespace()
                guard let next = peek() else { return false }
                index += 1
                if next == close { return true }
                guard next == UInt8(ascii: ",") else { return false }
            }
        case UInt8(ascii: "t"): return skipLiteral("true")
        case UInt8(ascii: "f"): return skipLiteral("false")
        case UInt8(ascii: "n"): return skipLiteral("null")
        default: return skipNumber()
        }
    }

    mutating func skipLiteral(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] { return false }
        index += count
        return true
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    mutating func skipNumber() -> Bool {
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), first.isDigit else { return false }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard peek()?.isDigit == true else { return false }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard peek()?.isDigit == true else { return false }
            skipDigits()
        }
        return true
    }

    mutating func skipDigits() {
        while let byte = peek(), byte.isDigit { index += 1 }
    }
}

extension UInt8 {
    fileprivate var isDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
    fileprivate var isHexDigit: Bool {
        isDigit || (self >= UInt8(ascii: "a") && self <= UInt8(ascii: "f")) || (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "F"))
    }
}
