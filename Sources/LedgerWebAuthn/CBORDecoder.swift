/// Decodes the CBOR that attestation objects and COSE keys use (see `CBORValue`), and refuses
/// the rest: tags, floats, other simple values, indefinite lengths, duplicate map keys and text
/// that is not UTF-8. The bytes come from a browser, so every length is checked against the input
/// before anything is allocated, and depth, item count and size are bounded.
public struct CBORDecoder: Sendable {
    /// The deepest nesting of arrays and maps (a top-level array is depth 1).
    public let maximumDepth: Int
    /// The most data items in one value, counting every key, element and scalar.
    public let maximumItems: Int
    /// The longest input, in bytes.
    public let maximumSize: Int

    public init(maximumDepth: Int = 16, maximumItems: Int = 4096, maximumSize: Int = 65536) {
        self.maximumDepth = maximumDepth
        self.maximumItems = maximumItems
        self.maximumSize = maximumSize
    }

    /// Decodes one value that fills the whole input: trailing bytes are refused.
    public func decode(_ bytes: some Collection<UInt8>) throws(WebAuthnError) -> CBORValue {
        guard bytes.count <= maximumSize else {
            throw WebAuthnError(.malformed, "CBOR: the input is longer than \(maximumSize) bytes")
        }
        let input = Array(bytes)
        let (value, consumed) = try decodePrefix(input[...])
        guard consumed == input.count else {
            throw WebAuthnError(.malformed, "CBOR: \(input.count - consumed) bytes follow the value")
        }
        return value
    }

    /// Decodes the value at the start of `bytes` and says how many bytes it took, for authenticator
    /// data, where the credential key is followed by the extensions without a length.
    public func decodePrefix(_ bytes: ArraySlice<UInt8>) throws(WebAuthnError) -> (value: CBORValue, consumed: Int) {
        guard bytes.count <= maximumSize else {
            throw WebAuthnError(.malformed, "CBOR: the input is longer than \(maximumSize) bytes")
        }
        var reader = Reader(bytes: bytes, index: bytes.startIndex, limits: self)
        let value = try reader.value(depth: 0)
        return (value, reader.index - bytes.startIndex)
    }

    /// A cursor over the input.
    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var index: Int
        let limits: CBORDecoder
        var items = 0

        var remaining: Int { bytes.endIndex - index }

        func failure(_ reason: String) -> WebAuthnError {
            WebAuthnError(.malformed, "CBOR: \(reason) at byte \(index - bytes.startIndex)")
        }

        /// Reads one data item; `depth` is the number of arrays and maps around it.
        mutating func value(depth: Int) throws(WebAuthnError) -> CBORValue {
            items += 1
            guard items <= limits.maximumItems else { throw failure("more than \(limits.maximumItems) items") }
            guard remaining > 0 else { throw failure("unexpected end of input") }
            let initial = bytes[index]
            let major = initial >> 5
            let info = initial & 0x1F
            switch major {
            case 0:
                return .unsigned(try argument(info))
            case 1:
                return .negative(try argument(info))
            case 2:
                return .bytes(Array(try string(length: try argument(info))))
            case 3:
                let utf8 = try string(length: try argument(info))
                let text = String(decoding: utf8, as: UTF8.self)
                // Decoding replaces invalid sequences with U+FFFD, so the round trip only holds for UTF-8.
                guard text.utf8.elementsEqual(utf8) else { throw failure("a text string that is not UTF-8") }
                return .text(text)
            case 4:
                try checkNesting(depth)
                let count = try argument(info)
                // Each element takes at least one byte: a count beyond the input is a lie, refused before reserving.
                guard count <= UInt64(remaining) else { throw failure("an array of \(count) elements in \(remaining) bytes") }
                var elements: [CBORValue] = []
                elements.reserveCapacity(Int(count))
                for _ in 0..<count {
                    elements.append(try value(depth: depth + 1))
                }
                return .array(elements)
            case 5:
                try checkNesting(depth)
                let count = try argument(info)
                guard count <= UInt64(remaining / 2) else { throw failure("a map of \(count) entries in \(remaining) bytes") }
                var entries: [(CBORValue, CBORValue)] = []
                entries.reserveCapacity(Int(count))
                var keys = Set<CBORValue>()
                for _ in 0..<count {
                    let key = try value(depth: depth + 1)
                    guard keys.insert(key).inserted else { throw failure("a map key that repeats") }
                    entries.append((key, try value(depth: depth + 1)))
                }
                return .map(entries)
            case 6:
                throw failure("a tag (major type 6), which is not supported")
            default:
                return try simple(info)
            }
        }

        mutating func checkNesting(_ depth: Int) throws(WebAuthnError) {
            guard depth < limits.maximumDepth else { throw failure("nesting deeper than \(limits.maximumDepth)") }
        }

        /// Major type 7: only false, true, null and undefined.
        mutating func simple(_ info: UInt8) throws(WebAuthnError) -> CBORValue {
            let value: CBORValue
            switch info {
            case 20: value = .bool(false)
            case 21: value = .bool(true)
            case 22: value = .null
            case 23: value = .undefined
            case 25, 26, 27: throw failure("a floating-point number, which is not supported")
            case 31: throw failure("a break code outside an indefinite-length item")
            case 28, 29, 30: throw failure("reserved additional information \(info)")
            default: throw failure("a simple value other than false, true, null or undefined")
            }
            index += 1
            return value
        }

        /// Reads the head's argument and moves past the head.
        mutating func argument(_ info: UInt8) throws(WebAuthnError) -> UInt64 {
            let width: Int
            switch info {
            case 0..<24:
                index += 1
                return UInt64(info)
            case 24: width = 1
            case 25: width = 2
            case 26: width = 4
            case 27: width = 8
            case 31: throw failure("an indefinite length, which is not supported")
            default: throw failure("reserved additional information \(info)")
            }
            guard remaining > width else { throw failure("unexpected end of input in a head") }
            var value: UInt64 = 0
            for offset in 1...width {
                value = value << 8 | UInt64(bytes[index + offset])
            }
            index += 1 + width
            return value
        }

        /// Reads `length` bytes of a string's content.
        mutating func string(length: UInt64) throws(WebAuthnError) -> ArraySlice<UInt8> {
            // Compared as UInt64 first: a length of 2^63 must not become an Int or an allocation.
            guard length <= UInt64(remaining) else {
                throw failure("a string of \(length) bytes with \(remaining) bytes left")
            }
            let end = index + Int(length)
            let content = bytes[index..<end]
            index = end
            return content
        }
    }
}
