/// Text literals of one-dimensional PostgreSQL arrays.
public enum PostgresArray {
    /// `{a,b,c}`. Elements are written bare unless `quoted`, which double-quotes and escapes
    /// them (for free text such as stream types); the bare word NULL stays a NULL.
    public static func literal(_ elements: [String], quoted: Bool = false) -> String {
        guard quoted else { return "{" + elements.joined(separator: ",") + "}" }
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            for byte in element.utf8 {
                if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
