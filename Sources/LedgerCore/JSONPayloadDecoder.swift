import Foundation

/// Decodes `Decodable` values from JSON bytes, for the hot paths that read stored event
/// payloads (folds, rebuilds, point-in-time state): several times faster than Foundation's
/// `JSONDecoder`, which spends most of such a fold in its generic machinery, in a `Date`
/// strategy closure per timestamp and in `UUID(uuidString:)` (`sscanf`).
///
/// Behaves like `JSONDecoder` for what the payloads use: unknown keys are ignored, a missing
/// key is `keyNotFound`, `null` for a non-optional is `valueNotFound`, invalid JSON or UTF-8 is
/// `dataCorrupted`. `UUID`s are read from their text in either case; `Date`s from a string by
/// `parseDate`, or from a number as `JSONEncoder`'s default strategy writes them.
public struct JSONPayloadDecoder: Sendable {
    let parseDate: @Sendable (String) -> Date?
    let refusesNUL: Bool
    let refusesDuplicateKeys: Bool

    /// With `refusesNUL`, a document with U+0000 in any string or key is `dataCorrupted` at its
    /// path, with `nulDescription`: PostgreSQL's text holds no NUL, so a request carrying one
    /// must be refused before it reaches a statement. With `refusesDuplicateKeys`, so is an
    /// object that names a key twice (after unescaping), with `duplicateKeyDescription`: for
    /// signed documents, where two parsers picking different copies would read two meanings.
    public init(parseDate: @escaping @Sendable (String) -> Date?, refusesNUL: Bool = false, refusesDuplicateKeys: Bool = false) {
        self.parseDate = parseDate
        self.refusesNUL = refusesNUL
        self.refusesDuplicateKeys = refusesDuplicateKeys
    }

    /// The `debugDescription` of the error for a NUL character.
    public static let nulDescription = "A string holds the character U+0000."
    /// The `debugDescription` of the error for a key named twice in one object.
    public static let duplicateKeyDescription = "An object names the same key twice."

    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        let node = try JSONNode.parse(bytes)
        if refusesNUL, let path = node.pathToFault(.nul) {
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: Self.nulDescription))
        }
        if refusesDuplicateKeys, let path = node.pathToFault(.duplicateKey) {
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: Self.duplicateKeyDescription))
        }
        let root = NodeDecoder(node: node, parseDate: parseDate, parent: nil, key: nil)
        return try root.decode(T.self, node: root.node, key: nil)
    }
}

/// One value of the document being decoded; the parent chain gives the coding path, which is
/// only built when an error needs it.
final class NodeDecoder: Decoder {
    let node: JSONNode
    let parseDate: @Sendable (String) -> Date?
    let parent: NodeDecoder?
    let key: (any CodingKey)?

    init(node: JSONNode, parseDate: @escaping @Sendable (String) -> Date?, parent: NodeDecoder?, key: (any CodingKey)?) {
        self.node = node
        self.parseDate = parseDate
        self.parent = parent
        self.key = key
    }

    var codingPath: [any CodingKey] {
        var path = parent?.codingPath ?? []
        if let key { path.append(key) }
        return path
    }

    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func path(_ key: (any CodingKey)?) -> [any CodingKey] {
        key.map { codingPath + [$0] } ?? codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = node else { throw node.mismatch([String: Any].self, at: codingPath) }
        return KeyedDecodingContainer(KeyedNodeContainer<Key>(decoder: self, members: members))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = node else { throw node.mismatch([Any].self, at: codingPath) }
        return UnkeyedNodeContainer(decoder: self, elements: elements)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    /// Decodes `node`, found under `key` of this decoder's value (nil: this decoder's own value).
    /// `String`, `UUID` and `Date` are read directly; anything else through its `init(from:)`.
    func decode<T: Decodable>(_ type: T.Type, node: JSONNode, key: (any CodingKey)?) throws -> T {
        if T.self == String.self { return try node.string(at: path(key)) as! T }
        if T.self == UUID.self {
            let text = try node.string(at: path(key))
            guard let uuid = UUID(text: text) else { throw corrupted("Invalid UUID string", at: path(key)) }
            return uuid as! T
        }
        if T.self == Date.self {
            // A number is `JSONEncoder`'s default (seconds since 2001), which keeps a `Date` exact.
            if case .number = node { return Date(timeIntervalSinceReferenceDate: try node.floatingPoint(Double.self, at: path(key))) as! T }
            guard let date = parseDate(try node.string(at: path(key))) else { throw corrupted("Invalid date", at: path(key)) }
            return date as! T
        }
        let decoder = key == nil ? self : NodeDecoder(node: node, parseDate: parseDate, parent: self, key: key)
        return try T(from: decoder)
    }

    func corrupted(_ reason: String, at path: [any CodingKey]) -> DecodingError {
        .dataCorrupted(.init(codingPath: path, debugDescription: reason + "."))
    }
}

extension NodeDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool {
        if case .null = node { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool { try node.bool(at: codingPath) }
    func decode(_ type: String.Type) throws -> String { try node.string(at: codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try node.floatingPoint(type, at: codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try node.floatingPoint(type, at: codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try node.integer(type, at: codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try node.integer(type, at: codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try node.integer(type, at: codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try node.integer(type, at: codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try node.integer(type, at: codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try node.integer(type, at: codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try node.integer(type, at: codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try node.integer(type, at: codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try node.integer(type, at: codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try node.integer(type, at: codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decode(type, node: node, key: nil) }
}

/// The members of an object, found by a scan that starts after the last one found: fields are
/// mostly read in the order they were written, and a dictionary (`[UUID: Session]` is keyed
/// by the UUIDs' text) is read key by key in `allKeys` order, which is document order — so
/// a lookup is usually one comparison, never a scan per key of a large object.
struct KeyedNodeContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: NodeDecoder
    let members: [(key: String, value: JSONNode)]
    private let scan = ScanPosition()

    init(decoder: NodeDecoder, members: [(key: String, value: JSONNode)]) {
        self.decoder = decoder
        self.members = members
    }

    private final class ScanPosition {
        var next = 0
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { members.compactMap { Key(stringValue: $0.key) } }

    func contains(_ key: Key) -> Bool { lookup(key) != nil }

    private func lookup(_ key: Key) -> JSONNode? {
        let name = key.stringValue
        let count = members.count
        var index = scan.next < count ? scan.next : 0
        for _ in 0..<count {
            if members[index].key == name {
                scan.next = index + 1
                return members[index].value
            }
            index = index + 1 == count ? 0 : index + 1
        }
        return nil
    }

    private func require(_ key: Key) throws -> JSONNode {
        guard let node = lookup(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value for key '\(key.stringValue)'."))
        }
        return node
    }

    /// The value under `key` unless it is missing or null.
    private func present(_ key: Key) -> JSONNode? {
        guard let node = lookup(key) else { return nil }
        if case .null = node { return nil }
        return node
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try require(key) { return true }
        return false
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try require(key).bool(at: decoder.path(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try require(key).string(at: decoder.path(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try require(key).floatingPoint(type, at: decoder.path(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try require(key).floatingPoint(type, at: decoder.path(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try require(key).integer(type, at: decoder.path(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try require(key).integer(type, at: decoder.path(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try require(key).integer(type, at: decoder.path(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try require(key).integer(type, at: decoder.path(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try require(key).integer(type, at: decoder.path(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try require(key).integer(type, at: decoder.path(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try require(key).integer(type, at: decoder.path(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try require(key).integer(type, at: decoder.path(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try require(key).integer(type, at: decoder.path(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try require(key).integer(type, at: decoder.path(key)) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.decode(type, node: try require(key), key: key)
    }

    // One lookup for an optional field instead of the default's three.
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try present(key)?.string(at: decoder.path(key))
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try present(key)?.bool(at: decoder.path(key))
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try present(key)?.integer(type, at: decoder.path(key))
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let node = present(key) else { return nil }
        return try decoder.decode(type, node: node, key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try child(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        let node = members.first { $0.key == "super" }?.value ?? .null
        return NodeDecoder(node: node, parseDate: decoder.parseDate, parent: decoder, key: IndexKey(stringValue: "super"))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        NodeDecoder(node: lookup(key) ?? .null, parseDate: decoder.parseDate, parent: decoder, key: key)
    }

    private func child(_ key: Key) throws -> NodeDecoder {
        NodeDecoder(node: try require(key), parseDate: decoder.parseDate, parent: decoder, key: key)
    }
}

struct UnkeyedNodeContainer: UnkeyedDecodingContainer {
    let decoder: NodeDecoder
    let elements: [JSONNode]
    var currentIndex = 0

    init(decoder: NodeDecoder, elements: [JSONNode]) {
        self.decoder = decoder
        self.elements = elements
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// The current element and its key; moves past it.
    private mutating func next(_ type: Any.Type) throws -> (JSONNode, IndexKey) {
        let key = IndexKey(intValue: currentIndex)
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [key], debugDescription: "Unkeyed container is at end."))
        }
        currentIndex += 1
        return (elements[currentIndex - 1], key)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else {
            _ = try next(Any.self)  // throws: nothing left
            return false
        }
        guard case .null = elements[currentIndex] else { return false }
        currentIndex += 1
        return true
    }

    private mutating func read<T>(_ type: T.Type, _ convert: (JSONNode, [any CodingKey]) throws -> T) throws -> T {
        let (node, key) = try next(type)
        return try convert(node, decoder.path(key))
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try read(type) { try $0.bool(at: $1) } }
    mutating func decode(_ type: String.Type) throws -> String { try read(type) { try $0.string(at: $1) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try read(type) { try $0.floatingPoint(type, at: $1) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try read(type) { try $0.floatingPoint(type, at: $1) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try read(type) { try $0.integer(type, at: $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try read(type) { try $0.integer(type, at: $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try read(type) { try $0.integer(type, at: $1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try read(type) { try $0.integer(type, at: $1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try read(type) { try $0.integer(type, at: $1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try read(type) { try $0.integer(type, at: $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try read(type) { try $0.integer(type, at: $1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try read(type) { try $0.integer(type, at: $1) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try read(type) { try $0.integer(type, at: $1) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try read(type) { try $0.integer(type, at: $1) } }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (node, key) = try next(type)
        return try decoder.decode(type, node: node, key: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try child([String: Any].self).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try child([Any].self).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        try child(Any.self)
    }

    private mutating func child(_ type: Any.Type) throws -> NodeDecoder {
        let (node, key) = try next(type)
        return NodeDecoder(node: node, parseDate: decoder.parseDate, parent: decoder, key: key)
    }
}

/// A coding key for array positions (and `super`).
struct IndexKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }
}

extension JSONNode {
    /// The path to the first string or key holding U+0000, if any. Built only on the way back
    /// from a find: a body without one (every request's) allocates nothing here.
    /// What a decoder may refuse in a document before decoding it.
    enum Fault {
        /// U+0000 in a string or a key.
        case nul
        /// A key named twice in one object.
        case duplicateKey
    }

    /// The path to the first place the document has `fault`, if any.
    func pathToFault(_ fault: Fault) -> [any CodingKey]? {
        switch self {
        case .string(let value): return fault == .nul && value.utf8.contains(0) ? [] : nil
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                if let found = element.pathToFault(fault) { return [IndexKey(intValue: index)] + found }
            }
            return nil
        case .object(let members):
            var keys = Set<String>()
            for member in members {
                let isFaulty = fault == .nul ? member.key.utf8.contains(0) : !keys.insert(member.key).inserted
                if isFaulty { return [IndexKey(stringValue: member.key)] }
                if let found = member.value.pathToFault(fault) { return [IndexKey(stringValue: member.key)] + found }
            }
            return nil
        case .null, .bool, .number: return nil
        }
    }

    func mismatch(_ type: Any.Type, at path: [any CodingKey]) -> DecodingError {
        if case .null = self {
            return .valueNotFound(type, .init(codingPath: path, debugDescription: "Expected \(type) value but found null instead."))
        }
        return .typeMismatch(type, .init(codingPath: path, debugDescription: "Expected to decode \(type) but found \(kind) instead."))
    }

    func bool(at path: @autoclosure () -> [any CodingKey]) throws -> Bool {
        guard case .bool(let value) = self else { throw mismatch(Bool.self, at: path()) }
        return value
    }

    func string(at path: @autoclosure () -> [any CodingKey]) throws -> String {
        guard case .string(let value) = self else { throw mismatch(String.self, at: path()) }
        return value
    }

    /// An integer written as one (`3`) or as an exactly integral float (`3.0`, `3e0`).
    func integer<I: FixedWidthInteger>(_ type: I.Type, at path: @autoclosure () -> [any CodingKey]) throws -> I {
        guard case .number(let text) = self else { throw mismatch(type, at: path()) }
        if let value = I(text) { return value }
        guard let double = Double(text), let value = I(exactly: double) else {
            throw DecodingError.dataCorrupted(.init(codingPath: path(), debugDescription: "Number \(text) does not fit in \(type)."))
        }
        return value
    }

    func floatingPoint<F: BinaryFloatingPoint & LosslessStringConvertible>(_ type: F.Type, at path: @autoclosure () -> [any CodingKey])
        throws -> F
    {
        guard case .number(let text) = self else { throw mismatch(type, at: path()) }
        guard let value = F(text), value.isFinite else {
            throw DecodingError.dataCorrupted(.init(codingPath: path(), debugDescription: "Number \(text) does not fit in \(type)."))
        }
        return value
    }
}
