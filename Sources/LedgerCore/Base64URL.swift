import Foundation

/// URL-safe base64 without padding (RFC 4648 §5), used for opaque tokens and cursors.
public enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.underestimatedCount * 4 + 2) / 3)
        append(bytes, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends the encoding of `bytes` to `output`.
    public static func append<Bytes: Sequence>(_ bytes: Bytes, to output: inout [UInt8]) where Bytes.Element == UInt8 {
        if bytes.withContiguousStorageIfAvailable({ append($0, to: &output) }) != nil { return }
        append(Array(bytes), to: &output)
    }

    /// The tight loop of `append` (every feed event carries a cursor token).
    public static func append(_ bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        output.reserveCapacity(output.count + (bytes.count * 4 + 2) / 3)
        alphabet.withUnsafeBufferPointer { alphabet in
            var index = 0
            while index + 3 <= bytes.count {
                let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                output.append(alphabet[Int(group >> 18 & 0x3F)])
                output.append(alphabet[Int(group >> 12 & 0x3F)])
                output.append(alphabet[Int(group >> 6 & 0x3F)])
                output.append(alphabet[Int(group & 0x3F)])
                index += 3
            }
            let left = bytes.count - index
            guard left > 0 else { return }
            let group = UInt32(bytes[index]) << 16 | (left == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            output.append(alphabet[Int(group >> 18 & 0x3F)])
            output.append(alphabet[Int(group >> 12 & 0x3F)])
            if left == 2 { output.append(alphabet[Int(group >> 6 & 0x3F)]) }
        }
    }

    public static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.allSatisfy({ $0.isBase64URLCharacter }) else { return nil }
        var base64 =
            text
            .replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        let remainder = base64.utf8.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { base64 += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: base64).map { Array($0) }
    }
}

extension UInt8 {
    fileprivate var isBase64URLCharacter: Bool {
        switch self {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
