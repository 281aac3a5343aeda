import Foundation
import LedgerCore

/// Who the client is: the socket's address, unless that is a trusted proxy, in which case the
/// right-most `X-Forwarded-For` entry that is not itself a trusted proxy.
public enum ClientAddress {
    public static func resolve(remote: String?, forwardedFor: String?, trustedProxies: [CIDR]) -> String? {
        guard let remote else { return nil }
        guard trustedProxies.contains(where: { $0.contains(remote) }), let forwardedFor else { return remote }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() where IPAddress.bytes(hop) != nil {
            if !trustedProxies.contains(where: { $0.contains(hop) }) { return hop }
        }
        return remote
    }

    /// The client as per-client limits count it: an IPv4 address as it is, an IPv6 address by
    /// its /64 (one subscriber's network: a host picks among 2^64 addresses at will), an
    /// IPv4-mapped IPv6 address as its IPv4 address. Anything else is returned unchanged.
    public static func limitKey(_ address: String) -> String {
        guard let bytes = IPAddress.bytes(address) else { return address }
        if bytes.count == 4 { return address }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}
