import Foundation

extension UUID {
    /// The 16 bytes of the UUID, in network order.
    public var bytes: [UInt8] {
        withUnsafeBytes(of: uuid) { Array($0) }
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
        withUnsafeBytes(of: uuid) { bytes in
            output.appendLowercaseHex(bytes[0..<4])
            output.append(UInt8(ascii: "-"))
            output.appendLowercaseHex(bytes[4..<6])
            output.append(UInt8(ascii: "-"))
            output.appendLowercaseHex(bytes[6..<8])
            output.append(UInt8(ascii: "-"))
            output.appendLowercaseHex(bytes[8..<10])
            output.append(UInt8(ascii: "-"))
            output.appendLowercaseHex(bytes[10..<16])
        }
    }
}
