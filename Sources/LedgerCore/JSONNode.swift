import Foundation

/// A parsed JSON document, as `JSONPayloadDecoder` walks it. Numbers keep their text, so an
/// integer is read exactly and a float only when a `Double` is asked for.
enum JSONNode {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONNode])
    /// Members in document order. A repeated key is kept twice, and which of the two a lookup
    /// finds is unspecified (the ledger never writes one).
    case object([(key: String, value: JSONNode)])

    var kind: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// Parses a whole document (RFC 8259; nesting deeper than 256 is refused).
    static func parse(_ bytes: [UInt8]) throws -> JSONNode {
        try bytes.withUnsafeBufferPointer { buffer in
            var parser = Parser(bytes: buffer)
            let node = try parser.value(depth: 0)
            parser.skipWhitespace()
            guard parser.offset == buffer.count else { throw parser.failure("unexpected text after the document") }
            return node
        }
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var offset = 0

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        func failure(_ reason: String) -> DecodingError {
            .dataCorrupted(.init(codingPath: [], debugDescription: "Invalid JSON at byte \(offset): \(reason)."))
        }

        mutating func skipWhitespace() {
            while offset < bytes.count {
                switch bytes[offset] {
                case 0x20, 0x09, 0x0A, 0x0D: offset += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) throws -> JSONNode {
            guard depth < 256 else { throw failure("nested too deeply") }
            skipWhitespace()
            guard offset < bytes.count else { throw failure("unexpected end") }
            switch bytes[offset] {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            default: return .number(try number())
            }
        }

        mutating func object(depth: Int) throws -> JSONNode {
            offset += 1
            var members: [(key: String, value: JSONNode)] = []
            skipWhitespace()
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
                offset += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw failure("expected a key") }
                let key = try string()
                skipWhitespace()
                guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { throw failure("expected ':'") }
                offset += 1
                members.append((key, try value(depth: depth + 1)))
                skipWhitespace()
                guard offset < bytes.count else { throw failure("unexpected end") }
                offset += 1
                switch bytes[offset - 1] {
                case UInt8(ascii: ","): continue
                case UInt8(ascii: "}"): return .object(members)
                default: offset -= 1; throw failure("expected ',' or '}'")
                }
            }
        }

        mutating func array(depth: Int) throws -> JSONNode {
            offset += 1
            var elements: [JSONNode] = []
            skipWhitespace()
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
                offset += 1
                return .array(elements)
            }
            while true {
                elements.append(try value(depth: depth + 1))
                skipWhitespace()
                guard offset < bytes.count else { throw failure("unexpected end") }
                offset += 1
                switch bytes[offset - 1] {
                case UInt8(ascii: ","): continue
                case UInt8(ascii: "]"): return .array(elements)
                default: offset -= 1; throw failure("expected ',' or ']'")
                }
            }
        }

        mutating func literal(_ word: StaticString) throws {
            let count = word.utf8CodeUnitCount
            guard offset + count <= bytes.count,
                  memcmp(bytes.baseAddress! + offset, word.utf8Start, count) == 0
            else { throw failure("unknown literal") }
            offset += count
        }

        mutating func number() throws -> String {
            let start = offset
            func digits() -> Int {
                let first = offset
                while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 { offset += 1 }
                return offset - first
            }
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            let integerStart = offset
            let integerDigits = digits()
            guard integerDigits > 0 else { throw failure("expected a value") }
            guard integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { throw failure("leading zero") }
            if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
                offset += 1
                guard digits() > 0 else { throw failure("expected a digit after '.'") }
            }
            if offset < bytes.count, bytes[offset] | 0x20 == UInt8(ascii: "e") {
                offset += 1
                if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
                guard digits() > 0 else { throw failure("expected an exponent") }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        }

        /// A string literal starting at the opening quote. Invalid UTF-8 is refused, as
        /// Foundation's decoder does.
        mutating func string() throws -> String {
            offset += 1
            let start = offset
            var ascii = true
            while offset < bytes.count {
                let byte = bytes[offset]
                if byte == UInt8(ascii: "\"") {
                    let raw = UnsafeBufferPointer(rebasing: bytes[start..<offset])
                    offset += 1
                    return try text(raw, ascii: ascii)
                }
                if byte == UInt8(ascii: "\\") { return try escapedString(from: start) }
                guard byte >= 0x20 else { throw failure("control character in a string") }
                if byte >= 0x80 { ascii = false }
                offset += 1
            }
            throw failure("unterminated string")
        }

        func text(_ raw: UnsafeBufferPointer<UInt8>, ascii: Bool) throws -> String {
            if ascii { return String(decoding: raw, as: UTF8.self) }
            guard let valid = String(validating: raw, as: UTF8.self) else { throw failure("invalid UTF-8") }
            return valid
        }

        private mutating func escapedString(from start: Int) throws -> String {
            var output = Array(UnsafeBufferPointer(rebasing: bytes[start..<offset]))
            while offset < bytes.count {
                let byte = bytes[offset]
                offset += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return try output.withUnsafeBufferPointer { try text($0, ascii: false) }
                case UInt8(ascii: "\\"):
                    guard offset < bytes.count else { throw failure("unterminated escape") }
                    let escape = bytes[offset]
                    offset += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escape)
                    case UInt8(ascii: "b"): output.append(0x08)
                    case UInt8(ascii: "f"): output.append(0x0C)
                    case UInt8(ascii: "n"): output.append(0x0A)
                    case UInt8(ascii: "r"): output.append(0x0D)
                    case UInt8(ascii: "t"): output.append(0x09)
                    case UInt8(ascii: "u"): try appendUnicodeEscape(to: &output)
                    default: throw failure("unknown escape")
                    }
                default:
                    guard byte >= 0x20 else { throw failure("control character in a string") }
                    output.append(byte)
                }
            }
            throw failure("unterminated string")
        }

        private mutating func hexQuad() throws -> UInt32 {
            guard offset + 4 <= bytes.count else { throw failure("short \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let nibble = Hex.nibble(bytes[offset]) else { throw failure("bad \\u escape") }
                value = value << 4 | UInt32(nibble)
                offset += 1
            }
            return value
        }

        private mutating func appendUnicodeEscape(to output: inout [UInt8]) throws {
            var scalarValue = try hexQuad()
            if (0xD800...0xDBFF).contains(scalarValue) {
                guard offset + 2 <= bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u")
                else { throw failure("unpaired surrogate") }
                offset += 2
                let low = try hexQuad()
                guard (0xDC00...0xDFFF).contains(low) else { throw failure("unpaired surrogate") }
                scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(scalarValue) else { throw failure("unpaired surrogate") }
            output.append(contentsOf: UTF8.encode(scalar)!)
        }
    }
}
