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

    /// Parses a whole document (RFC 8259, as `JSONScanner` checks it).
    static func parse(_ bytes: [UInt8]) throws -> JSONNode {
        var parser = Parser(scanner: JSONScanner(bytes: bytes))
        let node = try parser.value(depth: 0)
        guard parser.scanner.atEndAfterWhitespace() else { throw parser.failure("unexpected text after the document") }
        return node
    }

    /// Builds the tree; the scanner checks every token.
    private struct Parser {
        var scanner: JSONScanner

        func failure(_ reason: String) -> DecodingError {
            .dataCorrupted(.init(codingPath: [], debugDescription: "Invalid JSON at byte \(scanner.index): \(reason)."))
        }

        mutating func value(depth: Int) throws -> JSONNode {
            guard depth < JSONScanner.maximumDepth else { throw failure("nested too deeply") }
            scanner.skipWhitespace()
            guard let first = scanner.peek() else { throw failure("unexpected end") }
            switch first {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            default:
                let start = scanner.index
                guard scanner.skipNumber() else { throw failure("expected a value") }
                return .number(String(decoding: scanner.bytes[start..<scanner.index], as: UTF8.self))
            }
        }

        mutating func literal(_ word: StaticString, _ node: JSONNode) throws -> JSONNode {
            guard scanner.skipLiteral(word) else { throw failure("unknown literal") }
            return node
        }

        /// Consumes `byte` (after white space), or throws.
        mutating func expect(_ byte: UInt8, _ what: String) throws {
            scanner.skipWhitespace()
            guard scanner.peek() == byte else { throw failure("expected \(what)") }
            scanner.index += 1
        }

        /// After an element: true at the closing `close`, false after a comma.
        mutating func closes(_ close: UInt8) throws -> Bool {
            scanner.skipWhitespace()
            guard let next = scanner.peek(), next == close || next == UInt8(ascii: ",") else {
                throw failure("expected ',' or '\(Character(Unicode.Scalar(close)))'")
            }
            scanner.index += 1
            return next == close
        }

        mutating func object(depth: Int) throws -> JSONNode {
            scanner.index += 1
            var members: [(key: String, value: JSONNode)] = []
            scanner.skipWhitespace()
            if scanner.peek() == UInt8(ascii: "}") {
                scanner.index += 1
                return .object(members)
            }
            repeat {
                scanner.skipWhitespace()
                guard scanner.peek() == UInt8(ascii: "\"") else { throw failure("expected a key") }
                let key = try string()
                try expect(UInt8(ascii: ":"), "':'")
                members.append((key, try value(depth: depth + 1)))
            } while try !closes(UInt8(ascii: "}"))
            return .object(members)
        }

        mutating func array(depth: Int) throws -> JSONNode {
            scanner.index += 1
            var elements: [JSONNode] = []
            scanner.skipWhitespace()
            if scanner.peek() == UInt8(ascii: "]") {
                scanner.index += 1
                return .array(elements)
            }
            repeat {
                elements.append(try value(depth: depth + 1))
            } while try !closes(UInt8(ascii: "]"))
            return .array(elements)
        }

        /// A string literal: the scanner checks its escapes and UTF-8, so only one with
        /// escapes needs decoding byte by byte.
        mutating func string() throws -> String {
            let start = scanner.index
            guard scanner.skipString() else { throw failure("invalid string") }
            let content = scanner.bytes[(start + 1)..<(scanner.index - 1)]
            guard scanner.lastStringHadEscapes else { return String(decoding: content, as: UTF8.self) }
            return try unescaped(content)
        }

        private func unescaped(_ content: ArraySlice<UInt8>) throws -> String {
            var output: [UInt8] = []
            output.reserveCapacity(content.count)
            var index = content.startIndex
            func hexQuad() -> UInt32 {
                defer { index += 4 }
                return content[index..<index + 4].reduce(0) { $0 << 4 | UInt32(Hex.nibble($1) ?? 0) }
            }
            while index < content.endIndex {
                let byte = content[index]
                index += 1
                guard byte == UInt8(ascii: "\\") else {
                    output.append(byte)
                    continue
                }
                let escape = content[index]
                index += 1
                switch escape {
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "u"):
                    var scalarValue = hexQuad()
                    if (0xD800...0xDBFF).contains(scalarValue) {
                        guard index + 6 <= content.endIndex, content[index] == UInt8(ascii: "\\"), content[index + 1] == UInt8(ascii: "u")
                        else { throw failure("unpaired surrogate") }
                        index += 2
                        let low = hexQuad()
                        guard (0xDC00...0xDFFF).contains(low) else { throw failure("unpaired surrogate") }
                        scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(scalarValue) else { throw failure("unpaired surrogate") }
                    output.append(contentsOf: UTF8.encode(scalar)!)
                default: output.append(escape)  // `"`, `\`, `/`: the scanner allows no other
                }
            }
            return String(decoding: output, as: UTF8.self)
        }
    }
}
