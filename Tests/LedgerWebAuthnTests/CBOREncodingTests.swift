import LedgerCore
import LedgerWebAuthn
import LedgerWebAuthnTesting
import Testing

@Suite("CBOR encoding")
struct CBOREncodingTests {
    @Test("integers and lengths take their shortest head at each boundary")
    func shortestHeads() {
        let cases: [(CBORValue, String)] = [
            (.unsigned(23), "17"), (.unsigned(24), "1818"), (.unsigned(255), "18ff"), (.unsigned(256), "190100"),
            (.unsigned(65535), "19ffff"), (.unsigned(65536), "1a00010000"), (.unsigned(0xFFFF_FFFF), "1affffffff"),
            (.unsigned(0x1_0000_0000), "1b0000000100000000"), (.integer(-24), "37"), (.integer(-25), "3818"),
            (.integer(Int64.min), "3b7fffffffffffffff"),
            (.bytes([UInt8](repeating: 7, count: 24)), "5818" + String(repeating: "07", count: 24)),
        ]
        for (value, hex) in cases {
            #expect(Hex.encode(value.encoded) == hex)
        }
    }

    @Test("encode then decode gives the value back, for values of every supported type")
    func roundTrip() throws {
        var generator = SeededGenerator(seed: 8949)
        for _ in 0..<500 {
            let value = CBOREncodingTests.randomValue(depth: 0, using: &generator)
            let decoded = try CBORDecoder().decode(value.encoded)
            #expect(decoded == value)
            #expect(decoded.hashValue == value.hashValue)
        }
    }

    @Test("maps keep their order; equal maps hash equally and a reordered map is another value")
    func mapOrder() throws {
        let map = CBORValue.map([(.text("b"), .unsigned(1)), (.text("a"), .unsigned(2))])
        let decoded = try CBORDecoder().decode(map.encoded)
        #expect(decoded.mapEntries?.map(\.0) == [.text("b"), .text("a")])
        #expect(decoded["a"] == .unsigned(2))
        #expect(decoded[.text("c")] == nil)
        let reordered = CBORValue.map([(.text("a"), .unsigned(2)), (.text("b"), .unsigned(1))])
        #expect(map != reordered)
        #expect(Set([map, decoded, reordered]).count == 2)
    }

    /// A random value: no map repeats a key (keys are distinct integers).
    static func randomValue(depth: Int, using generator: inout SeededGenerator) -> CBORValue {
        let choice = Int.random(in: 0..<(depth < 4 ? 10 : 8), using: &generator)
        switch choice {
        case 0: return .unsigned(UInt64.random(in: 0...UInt64.max, using: &generator) >> UInt64.random(in: 0...63, using: &generator))
        case 1: return .negative(UInt64.random(in: 0...UInt64.max, using: &generator) >> UInt64.random(in: 0...63, using: &generator))
        case 2: return .bytes((0..<Int.random(in: 0..<40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        case 3:
            let scalars = (0..<Int.random(in: 0..<12, using: &generator)).compactMap { _ in
                Unicode.Scalar(UInt32.random(in: 0x20...0x2FFFF, using: &generator))
            }
            return .text(String(String.UnicodeScalarView(scalars)))
        case 4: return .bool(Bool.random(using: &generator))
        case 5: return .null
        case 6: return .undefined
        case 7: return .integer(Int64.random(in: -1000...1000, using: &generator))
        case 8: return .array((0..<Int.random(in: 0..<6, using: &generator)).map { _ in randomValue(depth: depth + 1, using: &generator) })
        default:
            let count = Int.random(in: 0..<6, using: &generator)
            return .map((0..<count).map { (.integer(Int64($0) - 3), randomValue(depth: depth + 1, using: &generator)) })
        }
    }
}
