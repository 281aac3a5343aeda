import Foundation

/// The fields a `Decodable` type reads, found by decoding it once with a decoder that records
/// each key asked for and answers with a placeholder. So a document of a payload's fields (the
/// event catalogue) comes from the code that reads the payload, and cannot drift from it.
public enum DecodableShape {
    /// One field: its JSON name (`parent.child` inside objects), its JSON type, and whether
    /// the type requires it (`decode`) or reads it when present (`decodeIfPresent`).
    public struct Field: Sendable, Equatable {
        public let name: String
        public let type: String
        public let required: Bool
    }

    /// The fields of `type` in the order its `init(from:)` reads them.
    public static func fields(of type: any Decodable.Type) -> [Field] {
        let recorder = Recorder()
        _ = try? type.init(from: RecordingDecoder(recorder: recorder, path: []))
        return recorder.fields
    }

    /// A JSON type's name for the values of `type`; nil for an object (its fields are listed).
    static func jsonType(_ type: Any.Type) -> String? {
        switch type {
        case is String.Type: return "string"
        case is UUID.Type: return "uuid"
        case is Date.Type: return "timestamp"
        case is Bool.Type: return "boolean"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type, is UInt64.Type: return "integer"
        case is Double.Type, is Float.Type: return "number"
        case let caseIterable as any (CaseIterable & RawRepresentable).Type:
            return "string (" + caseIterable.rawValues.joined(separator: ", ") + ")"
        case let array as any ArrayElement.Type: return "array of " + (jsonType(array.elementType) ?? "object")
        default: return nil
        }
    }

    /// A value of `type` to hand back: a real one where its decoding would check it (a UUID,
    /// an enum case), empty otherwise; nil when it must be decoded field by field.
    static func placeholder<T: Decodable>(_ type: T.Type) -> T? {
        switch type {
        case is String.Type: return "" as? T
        case is UUID.Type: return UUID() as? T
        case is Date.Type: return Date(timeIntervalSince1970: 0) as? T
        case is Bool.Type: return false as? T
        case is Int.Type: return 0 as? T
        case is Int64.Type: return Int64(0) as? T
        case is Double.Type: return 0.0 as? T
        case let caseIterable as any CaseIterable.Type: return caseIterable.first as? T
        case let array as any ArrayElement.Type: return array.empty as? T
        default: return nil
        }
    }

    final class Recorder {
        var fields: [Field] = []
        /// Keys asked about with `decodeNil` first: the standard library's `decodeIfPresent` for
        /// `String`, `Int`, `Bool`… does that before it calls `decode`.
        var optionalPaths: Set<[String]> = []
        func record(_ path: [String], _ type: Any.Type, required: Bool) {
            let required = required && !optionalPaths.contains(path)
            if let json = jsonType(type) {
                fields.append(Field(name: path.joined(separator: "."), type: json, required: required))
            } else {
                fields.append(Field(name: path.joined(separator: "."), type: "object", required: required))
            }
        }
    }
}

/// Arrays, seen through a protocol so their element type can be named.
protocol ArrayElement {
    static var elementType: Any.Type { get }
    static var empty: Self { get }
}

extension Array: ArrayElement {
    static var elementType: Any.Type { Element.self }
    static var empty: Self { [] }
}

extension CaseIterable {
    fileprivate static var first: Self? { allCases.first }
}

extension CaseIterable where Self: RawRepresentable {
    fileprivate static var rawValues: [String] { allCases.map { "\($0.rawValue)" } }
}

private struct RecordingDecoder: Decoder {
    let recorder: DecodableShape.Recorder
    let path: [String]
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RecordingKeyedContainer<Key>(recorder: recorder, path: path))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { EmptyUnkeyedContainer() }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "a value where fields were expected"))
    }
}

private struct RecordingKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let recorder: DecodableShape.Recorder
    let path: [String]
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }

    func decodeNil(forKey key: Key) throws -> Bool {
        recorder.optionalPaths.insert(path + [key.stringValue])
        return false
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try value(type, key, required: true)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        _ = try value(type, key, required: false)
        return nil
    }

    private func value<T: Decodable>(_ type: T.Type, _ key: Key, required: Bool) throws -> T {
        let fieldPath = path + [key.stringValue]
        recorder.record(fieldPath, type, required: required)
        if let placeholder = DecodableShape.placeholder(type) { return placeholder }
        return try T(from: RecordingDecoder(recorder: recorder, path: fieldPath))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(RecordingKeyedContainer<NestedKey>(recorder: recorder, path: path + [key.stringValue]))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { EmptyUnkeyedContainer() }

    func superDecoder() throws -> any Decoder { RecordingDecoder(recorder: recorder, path: path) }

    func superDecoder(forKey key: Key) throws -> any Decoder { RecordingDecoder(recorder: recorder, path: path + [key.stringValue]) }
}

private struct EmptyUnkeyedContainer: UnkeyedDecodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int? { 0 }
    var isAtEnd: Bool { true }
    var currentIndex: Int { 0 }

    mutating func decodeNil() throws -> Bool { true }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        throw DecodingError.valueNotFound(type, .init(codingPath: [], debugDescription: "no elements"))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.valueNotFound(Any.self, .init(codingPath: [], debugDescription: "no elements"))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { self }

    mutating func superDecoder() throws -> any Decoder {
        throw DecodingError.valueNotFound(Any.self, .init(codingPath: [], debugDescription: "no elements"))
    }
}
