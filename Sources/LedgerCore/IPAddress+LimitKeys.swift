extension IPAddress {
    /// The client as per-client limits count it: an IPv4 address as it is, an IPv6 address by
    /// its /64 (one subscriber's network: a host picks among 2^64 addresses at will), an
    /// IPv4-mapped IPv6 address as its IPv4 address. Anything else is returned unchanged.
    public static func limitKey(_ rawAddress: String) -> String {
        let address = canonical(rawAddress)
        guard let bytes = bytes(address) else { return address }
        if bytes.count == 4 { return address }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }

    /// The network an IPv6 client's `limitKey` belongs to, by its /48 (`2001:db8:1::/48` of
    /// `2001:db8:1:2::/64`): what one customer of a host or tunnel broker gets, 65,536 /64s at
    /// once. Nil for an IPv4 client and anything else.
    public static func networkLimitKey(_ limitKey: String) -> String? {
        guard limitKey.hasSuffix("::/64") else { return nil }
        let groups = limitKey.dropLast("::/64".count).split(separator: ":", omittingEmptySubsequences: false)
        guard groups.count == 4 else { return nil }
        return groups.prefix(3).joined(separator: ":") + "::/48"
    }
}
