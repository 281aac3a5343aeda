import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// IP addresses as text and bytes, and which of them are reachable only from inside a network.
public enum IPAddress {
    /// The address's bytes (4 for IPv4, 16 for IPv6); nil when it is not an address.
    public static func bytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// IPv4 blocks no webhook may reach unless the operator allows private networks: "this"
    /// network, private, shared (CGNAT), loopback, link-local (cloud metadata at
    /// 169.254.169.254 included), IETF protocol assignments, documentation, the 6to4 relay,
    /// benchmarking, multicast and reserved ranges (IANA's special-purpose registry).
    static let nonPublicIPv4: [CIDR] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
        "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/3",
    ].compactMap(CIDR.init)

    /// IPv6 is judged by what it is, not by what it is not: only global unicast (`2000::/3`)
    /// reaches a public host, so the many spellings outside it that some stacks route to
    /// loopback or to IPv4 (`::127.0.0.1`, `::ffff:0:127.0.0.1`, `5f00::1`) are refused whole.
    static let globalUnicast = CIDR("2000::/3")!
    /// Within it, the special-purpose blocks: IETF protocol assignments (Teredo, benchmarking,
    /// ORCHID among them), and the documentation prefixes.
    static let specialPurposeIPv6: [CIDR] = ["2001::/23", "2001:db8::/32", "3fff::/20"].compactMap(CIDR.init)
    /// IPv6 blocks that carry an IPv4 address, judged as that address: NAT64's well-known
    /// prefix (`64:ff9b::a.b.c.d`, its IPv4 in the last four bytes) and 6to4 (`2002:aabb:ccdd::`,
    /// its IPv4 in bytes 2 to 5).
    static let nat64 = CIDR("64:ff9b::/96")!
    static let sixToFour = CIDR("2002::/16")!

    /// Whether `text` is an address reachable from the internet at large: a public IPv4
    /// address, or a global unicast IPv6 address outside the special-purpose blocks. IPv4
    /// inside IPv6 (mapped `::ffff:a.b.c.d`, NAT64, 6to4) is judged by its IPv4 address.
    /// (Decimal, hex and short IPv4 spellings such as `2130706433` or `0x7f.1` never reach here as
    /// such: `resolve` turns them into the address they name.)
    public static func isPublic(_ text: String) -> Bool {
        guard let bytes = bytes(text) else { return false }
        guard bytes.count == 16 else { return isPublicIPv4(bytes) }
        if let mapped = mappedIPv4(bytes) { return isPublicIPv4(mapped) }
        if nat64.contains(bytes) { return isPublicIPv4(Array(bytes[12..<16])) }
        if sixToFour.contains(bytes) { return isPublicIPv4(Array(bytes[2..<6])) }
        return globalUnicast.contains(bytes) && !specialPurposeIPv6.contains { $0.contains(bytes) }
    }

    private static func isPublicIPv4(_ bytes: [UInt8]) -> Bool {
        !nonPublicIPv4.contains { $0.contains(bytes) }
    }

    /// The address as one form: an IPv4-mapped IPv6 address (`::ffff:10.0.0.5`, what a dual-stack
    /// socket reports for an IPv4 peer) as its IPv4 address; anything else unchanged.
    public static func canonical(_ text: String) -> String {
        guard let bytes = bytes(text), let mapped = mappedIPv4(bytes) else { return text }
        return mapped.map(String.init).joined(separator: ".")
    }

    /// The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`); nil for any other.
    static func mappedIPv4(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff else { return nil }
        return Array(bytes[12..<16])
    }

    /// An address with a port as proxies write it (`203.0.113.7:51234`, `[2001:db8::1]:443`),
    /// or a bare address, as its address; nil when it is neither.
    public static func parseHop(_ text: String) -> String? {
        if bytes(text) != nil { return canonical(text) }
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let inside = String(text[text.index(after: text.startIndex)..<close])
            return bytes(inside) != nil ? canonical(inside) : nil
        }
        let parts = text.split(separator: ":")
        if parts.count == 2, UInt16(parts[1]) != nil, bytes(String(parts[0]))?.count == 4 { return String(parts[0]) }
        return nil
    }

    /// The host of `url` when it is written in a form every HTTP client reads alike (see
    /// `isPlainHost`), as Foundation's `URL` gives it (an IPv6 address without its brackets);
    /// nil otherwise. The host is read from the text itself and must be what `URL` reads: a
    /// percent-encoded or bracketed name, which `URL` decodes and another client may strip and
    /// resolve again, would connect to a name the check never resolved, past the pinned address.
    public static func plainHost(ofURL url: String) -> String? {
        guard let parsed = URL(string: url)?.host, let schemeEnd = url.range(of: "://") else { return nil }
        let authority = url[schemeEnd.upperBound...].prefix { !"/?#".contains($0) }
        let hostAndPort = authority.split(separator: "@", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let written: String
        if hostAndPort.hasPrefix("[") {
            guard let close = hostAndPort.firstIndex(of: "]") else { return nil }
            written = String(hostAndPort[...close])
        } else {
            written = String(hostAndPort.prefix { $0 != ":" })
        }
        guard isPlainHost(written) else { return nil }
        let unbracketed = written.hasPrefix("[") ? String(written.dropFirst().dropLast()) : written
        return unbracketed.lowercased() == parsed.lowercased() ? parsed : nil
    }

    /// Whether `host` is one form every HTTP client reads alike: an IPv4 address, an IPv6 address
    /// in brackets (no zone), or a plain DNS name (letters, digits and hyphens in labels of at
    /// most 63, 253 in all, one trailing dot at most).
    public static func isPlainHost(_ host: String) -> Bool {
        if host.hasPrefix("[") || host.hasSuffix("]") {
            guard host.hasPrefix("["), host.hasSuffix("]"), host.count > 2 else { return false }
            var v6 = in6_addr()
            return inet_pton(AF_INET6, String(host.dropFirst().dropLast()), &v6) == 1
        }
        let name = host.hasSuffix(".") ? String(host.dropLast()) : host
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && label.first != "-" && label.last != "-"
                && label.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2D }
        }
    }

    /// The addresses `host` resolves to, in the resolver's order of preference (a literal
    /// address resolves to itself); empty when it does not resolve. The resolver blocks, so it runs on a thread of its own rather than
    /// holding one of the few threads Swift's tasks share.
    public static func resolve(_ host: String) async -> [String] {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: resolveBlocking(host)) }.start()
        }
    }

    private static func resolveBlocking(_ host: String) -> [String] {
        // Brackets belong to an IPv6 literal only: a bracketed name is not resolved without them.
        let bracketed = host.hasPrefix("[") && host.hasSuffix("]")
        let literal = bracketed ? String(host.dropFirst().dropLast()) : host
        if let address = bytes(literal) { return bracketed && address.count != 16 ? [] : [literal] }
        guard !bracketed else { return [] }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(literal, nil, &hints, &results) == 0, let first = results else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [String] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(entry.pointee.ai_addr, entry.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 {
                addresses.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            cursor = entry.pointee.ai_next
        }
        // In the resolver's order (RFC 6724: a family this host can reach first), once each: the
        // first is the one a push connects to.
        var seen = Set<String>()
        return addresses.filter { seen.insert($0).inserted }
    }
}

/// A block of IP addresses, `10.0.0.0/8` or `2001:db8::/32` (a bare address is a /32 or /128).
public struct CIDR: Sendable, Hashable {
    let network: [UInt8]
    let prefixLength: Int

    public init?(_ text: String) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let address = IPAddress.bytes(String(first)) else { return nil }
        let length = parts.count == 2 ? Int(parts[1]) : address.count * 8
        guard let length, (0...(address.count * 8)).contains(length) else { return nil }
        self.network = address
        self.prefixLength = length
    }

    public func contains(_ address: String) -> Bool {
        guard let bytes = IPAddress.bytes(address) else { return false }
        return contains(bytes)
    }

    /// Whether the address with these bytes is in the block (never across IPv4 and IPv6).
    public func contains(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == network.count else { return false }
        var remaining = prefixLength
        for (lhs, rhs) in zip(bytes, network) where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xff << (8 - bits))
            if lhs & mask != rhs & mask { return false }
            remaining -= bits
        }
        return true
    }
}
