import Foundation

/// A block of IP addresses, `10.0.0.0/8` or `2001:db8::/32` (a bare address is a /32 or /128).
public struct CIDR: Sendable, Hashable {
    let network: [UInt8]
    let prefixLength: Int

    public init?(_ text: String) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let address = ClientAddress.bytes(String(first)) else { return nil }
        let length = parts.count == 2 ? Int(parts[1]) : address.count * 8
        guard let length, (0...(address.count * 8)).contains(length) else { return nil }
        self.network = address
        self.prefixLength = length
    }

    public func contains(_ address: String) -> Bool {
        guard let bytes = ClientAddress.bytes(address), bytes.count == network.count else { return false }
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

/// Who the client is: the socket's address, unless that is a trusted proxy, in which case the
/// right-most `X-Forwarded-For` entry that is not itself a trusted proxy.
public enum ClientAddress {
    public static func resolve(remote: String?, forwardedFor: String?, trustedProxies: [CIDR]) -> String? {
        guard let remote else { return nil }
        guard trustedProxies.contains(where: { $0.contains(remote) }), let forwardedFor else { return remote }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() where bytes(hop) != nil {
            if !trustedProxies.contains(where: { $0.contains(hop) }) { return hop }
        }
        return remote
    }

    /// The client as per-client limits count it: an IPv4 address as it is, an IPv6 address by
    /// its /64 (one subscriber's network: a host picks among 2^64 addresses at will), an
    /// IPv4-mapped IPv6 address as its IPv4 address. Anything else is returned unchanged.
    public static func limitKey(_ address: String) -> String {
        guard let bytes = bytes(address) else { return address }
        if bytes.count == 4 { return address }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }

    /// The address's bytes (4 for IPv4, 16 for IPv6); nil when it is not an address.
    static func bytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
