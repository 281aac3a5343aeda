import Foundation

extension UUID {
    /// Reads the `8-4-4-4-12` hex form in either case, without `UUID(uuidString:)`'s `sscanf`
    /// (which shows up in profiles of long folds); nil for anything else.
    public init?(text: String) {
        var text = text
        guard let parsed = text.withUTF8({ UUID(utf8: $0) }) else { return nil }
        self = parsed
    }

    /// `init?(text:)` for UTF-8 bytes in place, such as a PostgreSQL result cell.
    public init?(utf8: UnsafeBufferPointer<UInt8>) {
        guard utf8.count == 36 else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let ok = withUnsafeMutableBytes(of: &bytes) { output -> Bool in
            var index = 0
            var byteIndex = 0
            while index < 36 {
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    guard utf8[index] == UInt8(ascii: "-") else { return false }
                    index += 1
                    continue
                }
                guard let high = Hex.nibble(utf8[index]), let low = Hex.nibble(utf8[index + 1]) else { return false }
                output[byteIndex] = high << 4 | low
                byteIndex += 1
                index += 2
            }
            return true
        }
        guard ok else { return nil }
        self.init(uuid: bytes)
    }
}
