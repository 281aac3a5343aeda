/// Checks that bytes are one JSON object and drops some of its top-level fields, without
/// decoding and re-encoding it: the event feed renders stored payloads at tens of thousands a
/// second, and they are already the JSON the events were encoded as.
public enum JSONObjectFilter {
    /// The object with every top-level field for which `drop(name)` is true left out, or nil
    /// when `bytes` are not exactly one well-formed JSON object (surrounding white space
    /// allowed). Field names are compared as written (escapes are not decoded), which is
    /// enough for the ASCII names this service writes.
    public static func filtered(_ bytes: [UInt8], dropping drop: (Substring) -> Bool) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        let wellFormed = append(bytes, to: &output) { drop(Substring(decoding: $0, as: UTF8.self)) }
        return wellFormed ? output : nil
    }

    /// Appends the filtered object to `output` (the form the event feed uses: no allocation per
    /// field). Returns false and leaves `output` as it was when `bytes` are not exactly one
    /// well-formed JSON object.
    public static func append(_ bytes: [UInt8], to output: inout [UInt8], dropping drop: (ArraySlice<UInt8>) -> Bool) -> Bool {
        let originalCount = output.count
        if appendFiltered(bytes, to: &output, dropping: drop) { return true }
        output.removeSubrange(originalCount...)
        return false
    }

    private static func appendFiltered(_ bytes: [UInt8], to output: inout [UInt8], dropping drop: (ArraySlice<UInt8>) -> Bool) -> Bool {
        var scanner = Scanner(bytes: bytes)
        scanner.skipWhitespace()
        guard scanner.peek() == UInt8(ascii: "{") else { return false }
        scanner.index += 1
        output.append(UInt8(ascii: "{"))
        var wroteField = false
        scanner.skipWhitespace()
        if scanner.peek() == UInt8(ascii: "}") {
            scanner.index += 1
        } else {
            while true {
                scanner.skipWhitespace()
                let nameStart = scanner.index
                guard scanner.skipString() else { return false }
                let nameEnd = scanner.index
                scanner.skipWhitespace()
                guard scanner.peek() == UInt8(ascii: ":") else { return false }
                scanner.index += 1
                scanner.skipWhitespace()
                let valueStart = scanner.index
                guard scanner.skipValue(depth: 0) else { return false }
                let valueEnd = scanner.index
                if !drop(bytes[(nameStart + 1)..<(nameEnd - 1)]) {
                    if wroteField { output.append(UInt8(ascii: ",")) }
                    output.append(contentsOf: bytes[nameStart..<nameEnd])
                    output.append(UInt8(ascii: ":"))
                    output.append(contentsOf: bytes[valueStart..<valueEnd])
                    wroteField = true
                }
                scanner.skipWhitespace()
                guard let separator = scanner.peek() else { return false }
                scanner.index += 1
                if separator == UInt8(ascii: "}") { break }
                guard separator == UInt8(ascii: ",") else { return false }
            }
        }
        guard scanner.atEndAfterWhitespace() else { return false }
        output.append(UInt8(ascii: "}"))
        return true
    }

    /// Appends `text` to `output` as a JSON string literal.
    public static func appendString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                output.append(contentsOf: Array("\\u00".utf8))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0xF)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Nesting deeper than this is refused rather than recursed into.
    static let maximumDepth = 64

    struct Scanner {
        let bytes: [UInt8]
        var index = 0

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
            guard depth < JSONObjectFilter.maximumDepth, let first = peek() else { return false }
            switch first {
            case UInt8(ascii: "\""):
                return skipString()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = first == UInt8(ascii: "{")
                let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                index += 1
                skipWhitespace()
                if peek() == close { index += 1; return true }
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
}

extension UInt8 {
    fileprivate var isDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
    fileprivate var isHexDigit: Bool {
        isDigit || (self >= UInt8(ascii: "a") && self <= UInt8(ascii: "f")) || (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "F"))
    }
}
