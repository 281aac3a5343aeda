import LedgerCore
import LedgerEvents

extension EventMetadata {
    /// `metadata::text` of this metadata once stored: how PostgreSQL prints a jsonb object (keys
    /// by length, then by their bytes; `": "` and `", "` between; the same escapes as
    /// `appendJSONString`), which the hash chain covers (`HashChain.Link.metadataText`). Lets a
    /// caller chain events before they are stored; `ledger_insert_new_streams` (schema/034)
    /// refuses a text that jsonb would print otherwise.
    var storedText: String {
        // jsonb orders an object's keys by length, then by their bytes.
        let fields = presentFields.sorted { lhs, rhs in
            lhs.key.utf8.count != rhs.key.utf8.count
                ? lhs.key.utf8.count < rhs.key.utf8.count : lhs.key.utf8.lexicographicallyPrecedes(rhs.key.utf8)
        }
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        for (key, value) in fields {
            if bytes.count > 1 { bytes.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: " ")]) }
            bytes.appendJSONString(key)
            bytes.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
            bytes.appendJSONString(value)
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
