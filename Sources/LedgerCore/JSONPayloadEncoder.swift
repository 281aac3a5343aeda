import Foundation

/// Encodes `Encodable` values as compact JSON with sorted keys, for the hot path that writes
/// event payloads (an import writes five million): the bytes Foundation's `JSONEncoder` writes
/// with `[.sortedKeys, .withoutEscapingSlashes]` and a `Date` strategy of `formatDate`, at a
/// fraction of its cost, which goes to its generic machinery and a boxed value per field.
///
/// Only what payloads hold is written: strings, booleans, integers, `UUID`s, `Date`s, optionals,
/// arrays and objects. A `Double`, `Float`, `Decimal`, `Data` or `URL` (each of which
/// `JSONEncoder` writes its own way) throws `Unsupported`, so a caller can use `JSONEncoder` for
/// such a value rather than write different bytes.
public struct JSONPayloadEncoder: Sendable {
    let formatDate: @Sendable (Date) -> String

    public init(formatDate: @escaping @Sendable (Date) -> String) {
        self.formatDate = formatDate
    }

    /// A value of a type this encoder leaves to `JSONEncoder`.
    public struct Unsupported: Error {
        public let typeName: String
    }

    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        try encodeNotingDates(value).bytes
    }

    /// The JSON, and whether it holds a `Date`: a value without one reads back as it was
    /// (nothing else this encoder writes loses anything), so its caller need not read it back.
    public func encodeNotingDates<T: Encodable>(_ value: T) throws -> (bytes: [UInt8], holdsDates: Bool) {
        let root = PayloadEncoding(formatDate: formatDate, state: PayloadEncodingState())
        try root.encodeValue(value)
        // A value that wrote nothing at all: `JSONEncoder` refuses it, so it decides.
        guard root.wroteValue else { throw JSONPayloadEncoder.Unsupported(typeName: "\(T.self)") }
        var output: [UInt8] = []
        output.reserveCapacity(256)
        root.value.write(into: &output)
        return (output, root.state.holdsDates)
    }
}

/// What one `encode` learns on the way, shared by every value's encoder.
private final class PayloadEncodingState {
    var holdsDates = false
}

/// A value being encoded: a finished fragment of JSON, or a container still being filled.
private enum PayloadValue {
    case fragment([UInt8])
    case object(PayloadObject)
    case array(PayloadArray)
    /// What a super encoder, handed out before it is filled, holds once written.
    case deferred(PayloadEncoding)

    func write(into output: inout [UInt8]) {
        switch self {
        case .fragment(let bytes): output.append(contentsOf: bytes)
        case .object(let object): object.write(into: &output)
        case .array(let array): array.write(into: &output)
        case .deferred(let encoding): encoding.value.write(into: &output)
        }
    }
}

private final class PayloadObject {
    var members: [(key: String, value: PayloadValue)] = []

    func write(into output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        // A key written twice keeps its last value, as `JSONEncoder`'s dictionary does; keys in
        // byte order of their UTF-8, as its `.sortedKeys` orders them.
        var last: [String: Int] = [:]
        for (index, member) in members.enumerated() { last[member.key] = index }
        let kept = last.count == members.count ? members : members.enumerated().filter { last[$0.element.key] == $0.offset }.map(\.element)
        let sorted = kept.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        for (index, member) in sorted.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            output.appendJSONString(member.key)
            output.append(UInt8(ascii: ":"))
            member.value.write(into: &output)
        }
        output.append(UInt8(ascii: "}"))
    }
}

private final class PayloadArray {
    var elements: [PayloadValue] = []

    func write(into output: inout [UInt8]) {
        output.append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            element.write(into: &output)
        }
        output.append(UInt8(ascii: "]"))
    }
}

/// The `Encoder` of one value: what it encodes becomes `value`. The parent chain gives the
/// coding path, built only when asked for.
private final class PayloadEncoding: Encoder {
    let formatDate: @Sendable (Date) -> String
    let state: PayloadEncodingState
    let parent: PayloadEncoding?
    let key: (any CodingKey)?
    /// What a value that encodes nothing (a struct without fields) is, as `JSONEncoder` writes it.
    var value: PayloadValue = .fragment(Array("{}".utf8)) {
        didSet { wroteValue = true }
    }
    /// Whether anything was encoded here (a container asked for counts).
    var wroteValue = false
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(
        formatDate: @escaping @Sendable (Date) -> String, state: PayloadEncodingState, parent: PayloadEncoding? = nil,
        key: (any CodingKey)? = nil
    ) {
        self.formatDate = formatDate
        self.state = state
        self.parent = parent
        self.key = key
    }

    var codingPath: [any CodingKey] {
        var path = parent?.codingPath ?? []
        if let key { path.append(key) }
        return path
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: PayloadObject
        wroteValue = true
        if case .object(let existing) = value {
            object = existing
        } else {
            object = PayloadObject()
            value = .object(object)
        }
        return KeyedEncodingContainer(PayloadKeyedContainer<Key>(encoding: self, object: object))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: PayloadArray
        wroteValue = true
        if case .array(let existing) = value {
            array = existing
        } else {
            array = PayloadArray()
            value = .array(array)
        }
        return PayloadUnkeyedContainer(encoding: self, array: array)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { PayloadSingleValue(encoding: self) }

    /// `value` encoded: scalars written directly, the types `JSONEncoder` treats specially
    /// refused, anything else through its `encode(to:)`.
    func encodeValue<T: Encodable>(_ encodable: T) throws {
        if let fragment = try fragment(for: encodable) {
            value = .fragment(fragment)
        } else {
            try encodable.encode(to: self)
        }
    }

    /// The JSON of `encodable` when it is a scalar this encoder writes itself; nil for a value
    /// that encodes itself.
    func fragment<T: Encodable>(for encodable: T) throws -> [UInt8]? {
        // Type comparisons, not `as?` casts: a cast per field is most of a naive encoder's time.
        if T.self == String.self { return Self.string(encodable as! String) }
        if T.self == UUID.self { return Self.string((encodable as! UUID).uuidString) }
        if T.self == Bool.self { return Array(((encodable as! Bool) ? "true" : "false").utf8) }
        if T.self == Int.self { return Array(String(encodable as! Int).utf8) }
        if T.self == Date.self {
            state.holdsDates = true
            return Self.string(formatDate(encodable as! Date))
        }
        // Every other integer width: one metatype check, and its decimal text as `JSONEncoder` writes it.
        if T.self is any FixedWidthInteger.Type { return Array(String(describing: encodable).utf8) }
        if T.self == Double.self || T.self == Float.self || T.self == Decimal.self || T.self == Data.self || T.self == URL.self {
            throw JSONPayloadEncoder.Unsupported(typeName: "\(T.self)")
        }
        return nil
    }

    static func string(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 2)
        bytes.appendJSONString(text)
        return bytes
    }

    func nested(_ key: any CodingKey) -> PayloadEncoding {
        PayloadEncoding(formatDate: formatDate, state: state, parent: self, key: key)
    }
}

private struct PayloadKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoding: PayloadEncoding
    let object: PayloadObject
    var codingPath: [any CodingKey] { encoding.codingPath }

    mutating func encodeNil(forKey key: Key) throws {
        object.members.append((key.stringValue, .fragment(Array("null".utf8))))
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        if let fragment = try encoding.fragment(for: value) {
            object.members.append((key.stringValue, .fragment(fragment)))
            return
        }
        let child = encoding.nested(key)
        try value.encode(to: child)
        object.members.append((key.stringValue, child.value))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = encoding.nested(key)
        let container = child.container(keyedBy: keyType)
        object.members.append((key.stringValue, child.value))
        return container
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = encoding.nested(key)
        let container = child.unkeyedContainer()
        object.members.append((key.stringValue, child.value))
        return container
    }

    mutating func superEncoder() -> any Encoder {
        let child = encoding.nested(SuperKey())
        object.members.append(("super", .deferred(child)))
        return child
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        // Filled after it is returned: its value is read when the document is written.
        let child = encoding.nested(key)
        object.members.append((key.stringValue, .deferred(child)))
        return child
    }
}

/// The key `superEncoder()` writes under, as `JSONEncoder` names it.
private struct SuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
}

private struct PayloadUnkeyedContainer: UnkeyedEncodingContainer {
    let encoding: PayloadEncoding
    let array: PayloadArray
    var codingPath: [any CodingKey] { encoding.codingPath }
    var count: Int { array.elements.count }

    private struct Index: CodingKey {
        let intValue: Int?
        var stringValue: String { intValue.map(String.init) ?? "" }
        init(intValue: Int) { self.intValue = intValue }
        init?(stringValue: String) { nil }
    }

    mutating func encodeNil() throws { array.elements.append(.fragment(Array("null".utf8))) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        if let fragment = try encoding.fragment(for: value) {
            array.elements.append(.fragment(fragment))
            return
        }
        let child = encoding.nested(Index(intValue: count))
        try value.encode(to: child)
        array.elements.append(child.value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let child = encoding.nested(Index(intValue: count))
        let container = child.container(keyedBy: keyType)
        array.elements.append(child.value)
        return container
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = encoding.nested(Index(intValue: count))
        let container = child.unkeyedContainer()
        array.elements.append(child.value)
        return container
    }

    mutating func superEncoder() -> any Encoder {
        let child = encoding.nested(Index(intValue: count))
        array.elements.append(.deferred(child))
        return child
    }
}

private struct PayloadSingleValue: SingleValueEncodingContainer {
    let encoding: PayloadEncoding
    var codingPath: [any CodingKey] { encoding.codingPath }

    mutating func encodeNil() throws { encoding.value = .fragment(Array("null".utf8)) }

    mutating func encode<T: Encodable>(_ value: T) throws { try encoding.encodeValue(value) }
}
