import Hummingbird

extension Request {
    /// The credential of an `Authorization: Bearer <credential>` header, without surrounding
    /// blanks; nil when there is no such header. Read on every signed-in request, so it trims
    /// the ASCII blanks HTTP allows by hand rather than through Foundation's character sets.
    var bearerCredential: String? {
        guard let header = headers[.authorization], header.hasPrefix("Bearer ") else { return nil }
        let value = header.utf8.dropFirst(7)
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = value.firstIndex(where: { !isBlank($0) }), let last = value.lastIndex(where: { !isBlank($0) }) else {
            return ""
        }
        return String(Substring(value[first...last]))
    }
}
