import LedgerCore
import LedgerWebAuthn
import LedgerWebAuthnTesting
import Testing

@Suite("CBOR decoder")
struct CBORDecoderTests {
    static func bytes(_ hex: String) -> [UInt8] { Hex.decode(hex)! }

    static func decode(_ hex: String, _ decoder: CBORDecoder = CBORDecoder()) throws(WebAuthnError) -> CBORValue {
        try decoder.decode(bytes(hex))
    }

    /// The refusal of `hex`, which must be `.malformed`.
    static func refusal(_ hex: String, _ decoder: CBORDecoder = CBORDecoder()) -> String? {
        do {
            _ = try decoder.decode(bytes(hex))
            return nil
        } catch {
            #expect(error.code == .malformed)
            return error.message
        }
    }

    /// RFC 8949 Appendix A, the examples of the supported types.
    static let appendixA: [(String, CBORValue)] = [
        ("00", .unsigned(0)), ("01", .unsigned(1)), ("0a", .unsigned(10)), ("17", .unsigned(23)), ("1818", .unsigned(24)),
        ("1819", .unsigned(25)), ("1864", .unsigned(100)), ("1903e8", .unsigned(1000)), ("1a000f4240", .unsigned(1_000_000)),
        ("1b000000e8d4a51000", .unsigned(1_000_000_000_000)), ("1bffffffffffffffff", .unsigned(UInt64.max)),
        ("3bffffffffffffffff", .negative(UInt64.max)),  // -18446744073709551616 = -2^64
        ("20", .integer(-1)), ("29", .integer(-10)), ("3863", .integer(-100)), ("3903e7", .integer(-1000)),
        ("f4", .bool(false)), ("f5", .bool(true)), ("f6", .null), ("f7", .undefined),
        ("40", .bytes([])), ("4401020304", .bytes([1, 2, 3, 4])),
        ("60", .text("")), ("6161", .text("a")), ("6449455446", .text("IETF")), ("62225c", .text("\"\\")),
        ("62c3bc", .text("\u{00FC}")), ("63e6b0b4", .text("\u{6C34}")), ("64f0908591", .text("\u{10151}")),
        ("80", .array([])), ("83010203", .array([.unsigned(1), .unsigned(2), .unsigned(3)])),
        (
            "8301820203820405",
            .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])])
        ),
        ("98190102030405060708090a0b0c0d0e0f101112131415161718181819", .array((1...25).map { .unsigned(UInt64($0)) })),
        ("a0", .map([])), ("a201020304", .map([(.unsigned(1), .unsigned(2)), (.unsigned(3), .unsigned(4))])),
        (
            "a26161016162820203",
            .map([(.text("a"), .unsigned(1)), (.text("b"), .array([.unsigned(2), .unsigned(3)]))])
        ),
        ("826161a161626163", .array([.text("a"), .map([(.text("b"), .text("c"))])])),
        (
            "a56161614161626142616361436164614461656145",
            .map(["a", "b", "c", "d", "e"].map { (CBORValue.text($0), CBORValue.text($0.uppercased())) })
        ),
    ]

    @Test("RFC 8949 Appendix A: each example of a supported type decodes, and encodes back to the same bytes")
    func appendixAVectors() throws {
        for (hex, expected) in Self.appendixA {
            let value = try Self.decode(hex)
            #expect(value == expected, "\(hex)")
            #expect(Hex.encode(value.encoded) == hex, "\(hex)")
        }
        #expect(CBORValue.negative(UInt64.max).integerValue == nil)
        #expect(CBORValue.integer(-1000).integerValue == -1000)
        #expect(CBORValue.unsigned(UInt64.max).integerValue == nil)
    }

    @Test("RFC 8949 Appendix A: indefinite lengths are refused")
    func indefiniteLengths() {
        for hex in [
            "5f42010243030405ff", "7f657374726561646d696e67ff", "9fff", "9f018202039f0405ffff", "9f01820203820405ff",
            "83018202039f0405ff", "bf61610161629f0203ffff", "bf6346756ef563416d7421ff",
        ] {
            #expect(Self.refusal(hex)?.contains("indefinite") == true, "\(hex)")
        }
        #expect(Self.refusal("ff") != nil)  // a lone break
    }

    @Test("RFC 8949 Appendix A: tags, bignums and floats are refused")
    func tagsAndFloats() {
        // Tags 0, 1, 23, 24, 32; bignums ±2^64 (tags 2 and 3).
        for hex in [
            "c074323031332d30332d32315432303a30343a30305a", "c11a514b67b0", "d74401020304", "d818456449455446",
            "d82076687474703a2f2f7777772e6578616d706c652e636f6d", "c249010000000000000000", "c349010000000000000000",
        ] {
            #expect(Self.refusal(hex)?.contains("tag") == true, "\(hex)")
        }
        // Half, single and double floats.
        for hex in ["f90000", "f98000", "f93c00", "fa47c35000", "fb3ff199999999999a", "f97c00", "fb7ff8000000000000"] {
            #expect(Self.refusal(hex)?.contains("floating") == true, "\(hex)")
        }
        // Other simple values: simple(16), simple(255), simple(24) in two bytes.
        for hex in ["f0", "f8ff", "f818"] {
            #expect(Self.refusal(hex) != nil, "\(hex)")
        }
        // Reserved additional information 28-30.
        for hex in ["1c", "3d", "5e", "fc"] {
            #expect(Self.refusal(hex)?.contains("reserved") == true, "\(hex)")
        }
    }

    @Test("a map whose key repeats is refused, also when the repeat is encoded differently")
    func duplicateKeys() {
        #expect(Self.refusal("a201020103")?.contains("repeats") == true)
        #expect(Self.refusal("a2616101616102")?.contains("repeats") == true)
        // 1 and 1 written in two bytes are the same key.
        #expect(Self.refusal("a20102180103")?.contains("repeats") == true)
        // Keys equal in value but of different types are different keys.
        #expect((try? Self.decode("a20102613102")) != nil)
    }

    @Test("truncated input and trailing bytes are refused")
    func truncatedAndTrailing() throws {
        for hex in ["", "18", "1903", "1a000f42", "1bffffffffffffff", "44010203", "64494554", "830102", "a20102", "a201"] {
            #expect(Self.refusal(hex) != nil, "'\(hex)'")
        }
        #expect(Self.refusal("0000")?.contains("follow") == true)
        #expect(Self.refusal("83010203ff")?.contains("follow") == true)

        let (value, consumed) = try CBORDecoder().decodePrefix(Self.bytes("8301020304ff")[...])
        #expect(value == .array([.unsigned(1), .unsigned(2), .unsigned(3)]))
        #expect(consumed == 4)
        // A slice that does not start at index 0.
        let slice = Self.bytes("ffff6161ff")[2...]
        let prefix = try CBORDecoder().decodePrefix(slice)
        #expect(prefix.value == .text("a"))
        #expect(prefix.consumed == 2)
    }

    @Test("text that is not UTF-8 is refused")
    func invalidUTF8() {
        for hex in ["61ff", "62c328", "63e28228", "64f0288cbc", "62c0af", "63eda080"] {
            #expect(Self.refusal(hex)?.contains("UTF-8") == true, "\(hex)")
        }
        // The same bytes are fine as a byte string.
        #expect((try? Self.decode("42c328")) == .bytes([0xC3, 0x28]))
    }

    @Test("a length claiming 2^63 bytes (or elements) is refused without allocating")
    func hugeLengths() {
        // Byte string, text string, array and map heads with a 64-bit argument.
        for hex in ["5b8000000000000000", "7b8000000000000000", "9b8000000000000000", "bb8000000000000000", "5bffffffffffffffff"] {
            #expect(Self.refusal(hex + "00") != nil, "\(hex)")
        }
        #expect(Self.refusal("5a00010000" + String(repeating: "00", count: 100))?.contains("65536 bytes") == true)
        // An array count beyond the input's bytes, below the item limit.
        #expect(Self.refusal("990fa0" + String(repeating: "00", count: 10)) != nil)
    }

    @Test("nesting deeper than the limit is refused; the limit itself is accepted")
    func depth() throws {
        let sixteen = String(repeating: "81", count: 15) + "80"
        #expect(try Self.decode(sixteen) != .null)
        #expect(Self.refusal("81" + sixteen)?.contains("nesting") == true)
        let shallow = CBORDecoder(maximumDepth: 2)
        #expect((try? Self.decode("a1018100", shallow)) != nil)
        #expect(Self.refusal("a101818100", shallow) != nil)
        // Scalars do not count as nesting.
        #expect((try? Self.decode("01", CBORDecoder(maximumDepth: 0))) == .unsigned(1))
        // 10 000 nested arrays: refused at depth 17, long before the stack is at risk.
        #expect(Self.refusal(String(repeating: "81", count: 10_000) + "00") != nil)
    }

    @Test("more items than the limit are refused; the limit itself is accepted")
    func itemCount() throws {
        let decoder = CBORDecoder(maximumItems: 10)
        // An array of 9 elements is 10 items.
        #expect((try? Self.decode("89" + String(repeating: "00", count: 9), decoder)) != nil)
        #expect(Self.refusal("8a" + String(repeating: "00", count: 10), decoder)?.contains("items") == true)
        // Map keys count too: 5 entries are 11 items with the map.
        #expect(Self.refusal("a500000100020003000400", decoder) != nil)
        // The default: 4096.
        let big = CBORValue.array((0..<4095).map { _ in .unsigned(0) }).encoded
        #expect((try? CBORDecoder().decode(big)) != nil)
        let bigger = CBORValue.array((0..<4096).map { _ in .unsigned(0) }).encoded
        #expect(throws: WebAuthnError.self) { try CBORDecoder().decode(bigger) }
    }

    @Test("input longer than the size limit is refused before decoding")
    func size() {
        let decoder = CBORDecoder(maximumSize: 8)
        #expect((try? decoder.decode(Self.bytes("4700000000000000"))) != nil)
        #expect(Self.refusal("480000000000000000", decoder)?.contains("longer") == true)
        #expect(throws: WebAuthnError.self) { try decoder.decodePrefix(Self.bytes("000000000000000000")[...]) }
    }
}
