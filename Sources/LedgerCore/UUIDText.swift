import Foundation

/// UUIDs as JSON text. Swift encodes a `UUID` with upper-case hex, the service's envelopes and
/// answers use lower case: the event feed writes stored payloads' ids in the envelope's case, so
/// a consumer comparing `data.session_id` with a session's id compares like with like.
public enum UUIDText {
    /// Whether a field's name (its JSON bytes, unescaped ASCII) says it holds ids: `…_id` or `…_ids`.
    public static func namesIDs(_ name: ArraySlice<UInt8>) -> Bool {
        name.last == UInt8(ascii: "d") && name.dropLast().last == UInt8(ascii: "i") && name.dropLast(2).last == UInt8(ascii: "_")
            || name.last == UInt8(ascii: "s") && namesIDs(name.dropLast())
    }

    /// Appends `value` with its hex in lower case when it is a JSON string holding exactly one
    /// UUID (8-4-4-4-12 hex digits) or an array of only such strings; returns false and appends
    /// nothing otherwise (the caller copies the value as it is).
    public static func appendLowercased(_ value: ArraySlice<UInt8>, to output: inout [UInt8]) -> Bool {
        guard isUUIDString(value) || isArrayOfUUIDStrings(value) else { return false }
        output.append(contentsOf: value.lazy.map { (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0) ? $0 + 32 : $0 })
        return true
    }

    /// `"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"`, quotes included (the shape `UUID(utf8:)` reads).
    static func isUUIDString(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.count == 38, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return false }
        return bytes.dropFirst().dropLast().withContiguousStorageIfAvailable { UUID(utf8: $0) } != nil
    }

    /// `[` UUID strings separated by commas, white space anywhere between `]`: as a JSON encoder
    /// writes an array of UUIDs.
    static func isArrayOfUUIDStrings(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.first == UInt8(ascii: "["), bytes.last == UInt8(ascii: "]") else { return false }
        let inner = bytes.dropFirst().dropLast()
        if inner.allSatisfy(isWhitespace) { return true }
        return inner.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).allSatisfy { isUUIDString(trimmed($0)) }
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard let first = bytes.firstIndex(where: { !isWhitespace($0) }), let last = bytes.lastIndex(where: { !isWhitespace($0) })
        else { return bytes[bytes.startIndex..<bytes.startIndex] }
        return bytes[first...last]
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
