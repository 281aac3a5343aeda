import Foundation
import LedgerCore

/// Who the client is: the socket's address, unless that is a trusted proxy, in which case the
/// right-most `X-Forwarded-For` entry that is not itself a trusted proxy.
public enum ClientAddress {
    /// The client of a request with this peer and `X-Forwarded-For`.
    ///
    /// Entries are read as proxies write them (a port or brackets allowed). An entry that is not
    /// an address ends the walk at the proxy that wrote it: skipping it would let the client's
    /// own left-hand entries speak for it. IPv4-mapped IPv6 addresses count as IPv4, so a
    /// dual-stack socket's `::ffff:10.0.0.5` matches a `10.0.0.0/8` proxy block.
    public static func resolve(remote rawRemote: String?, forwardedFor: String?, trustedProxies: [CIDR]) -> String? {
        guard let rawRemote else { return nil }
        let remote = IPAddress.canonical(rawRemote)
        guard trustedProxies.contains(where: { $0.contains(remote) }), let forwardedFor else { return remote }
        var closest = remote
        for entry in forwardedFor.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }).reversed() {
            guard let hop = IPAddress.parseHop(entry) else { return closest }
            if !trustedProxies.contains(where: { $0.contains(hop) }) { return hop }
            closest = hop
        }
        return closest
    }

    /// The client as per-client limits count it (`IPAddress.limitKey`: an IPv6 client by its /64).
    public static func limitKey(_ rawAddress: String) -> String {
        IPAddress.limitKey(rawAddress)
    }
}
