/// Checks that bytes are one JSON object and drops some of its top-level fields, without
/// decoding and re-encoding it: the event feed renders stored payloads at tens of thousands a
/// second, and they are already the JSON the events were encoded as.
public enum JSONObjectFilter {
    /// The object with every top-level field for which `drop(name)` is true left out, or nil
    /// when `bytes` are not exactly one well-formed JSON object (surrounding white space
    /// allowed). Field names are compared as written (escapes are not decoded), which is
    /// enough for the ASCII names this service writes.
    ///
    /// With `lowercasingIDs`, a top-level field named `…_id` whose value is a UUID string, or
    /// `…_ids` whose value is an array of them, is written with lower-case hex (see
    /// `UUIDText.appendLowercased`); every other byte is copied as it is.
    public static func filtered(_ bytes: [UInt8], dropping drop: (Substring) -> Bool, lowercasingIDs: Bool = false) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        let wellFormed = append(bytes, to: &output, lowercasingIDs: lowercasingIDs) { drop(Substring(decoding: $0, as: UTF8.self)) }
        return wellFormed ? output : nil
    }

    /// Appends the filtered object to `output` (the form the event feed uses: no allocation per
    /// field). Returns false and leaves `output` as it was when `bytes` are not exactly one
    /// well-formed JSON object.
    public static func append(
        _ bytes: [UInt8], to output: inout [UInt8], lowercasingIDs: Bool = false, dropping drop: (ArraySlice<UInt8>) -> Bool
    ) -> Bool {
        let originalCount = output.count
        if appendFiltered(bytes, to: &output, lowercasingIDs: lowercasingIDs, dropping: drop) { return true }
        output.removeSubrange(originalCount...)
        return false
    }

    private static func appendFiltered(
        _ bytes: [UInt8], to output: inout [UInt8], lowercasingIDs: Bool, dropping drop: (ArraySlice<UInt8>) -> Bool
    ) -> Bool {
        var scanner = JSONScanner(bytes: bytes)
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
                let name = bytes[(nameStart + 1)..<(nameEnd - 1)]
                if !drop(name) {
                    if wroteField { output.append(UInt8(ascii: ",")) }
                    output.append(contentsOf: bytes[nameStart..<nameEnd])
                    output.append(UInt8(ascii: ":"))
                    let value = bytes[valueStart..<valueEnd]
                    if !(lowercasingIDs && UUIDText.namesIDs(name) && UUIDText.appendLowercased(value, to: &output)) {
                        output.append(contentsOf: value)
                    }
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
}
