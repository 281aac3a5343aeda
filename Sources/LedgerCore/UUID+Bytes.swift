import Foundation

extension UUID {
    /// The 16 bytes of the UUID, in network order.
    public var bytes: [UInt8] {
        withUnsafeBytes(of: uuid) { Array($0) }
    }

    /// The UUID of 16 bytes in network order; nil for any other count.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self = bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
    }

    /// The UUID in lower case, as PostgreSQL prints it.
    public var lowercased: String {
        var text: [UInt8] = []
        text.reserveCapacity(36)
        appendLowercased(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends the lower-case form (`8-4-4-4-12` hex digits) to `output`.
    public func appendLowercased(to output: inout [UInt8]) {
        // The 36 characters are laid out on the stack and copied once.
        withUnsafeBytes(of: uuid) { bytes in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { text in
                var at = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[at] = UInt8(ascii: "-")
                        at += 1
                    }
                    text[at] = Hex.lowercaseDigit(byte >> 4)
                    text[at + 1] = Hex.lowercaseDigit(byte & 0x0F)
                    at += 2
                }
                output.append(contentsOf: text)
            }
        }
    }
}
