import LedgerCore
import LedgerServer
import Testing

@Suite("Client address and trusted proxies")
struct ClientAddressTests {
    @Test("X-Forwarded-For is believed only from trusted proxies, right to left")
    func resolution() throws {
        let proxies = [try #require(CIDR("10.0.0.0/8"))]
        #expect(ClientAddress.resolve(remote: "203.0.113.9", forwardedFor: "1.2.3.4", trustedProxies: proxies) == "203.0.113.9")
        #expect(ClientAddress.resolve(remote: "10.0.0.5", forwardedFor: "1.2.3.4", trustedProxies: proxies) == "1.2.3.4")
        #expect(ClientAddress.resolve(remote: "10.0.0.5", forwardedFor: "6.6.6.6, 1.2.3.4, 10.1.1.1", trustedProxies: proxies) == "1.2.3.4")
        #expect(ClientAddress.resolve(remote: "10.0.0.5", forwardedFor: "garbage", trustedProxies: proxies) == "10.0.0.5")
        #expect(ClientAddress.resolve(remote: "10.0.0.5", forwardedFor: nil, trustedProxies: proxies) == "10.0.0.5")
        #expect(ClientAddress.resolve(remote: nil, forwardedFor: "1.2.3.4", trustedProxies: proxies) == nil)
        // Proxies that write ports: the address is read through them.
        #expect(ClientAddress.resolve(remote: "10.0.0.5", forwardedFor: "1.2.3.4:51234", trustedProxies: proxies) == "1.2.3.4")
        #expect(ClientAddress.resolve(remote: "10.0.0.5", forwardedFor: "[2001:db8::7]:443", trustedProxies: proxies) == "2001:db8::7")
        // An entry that is not an address stops the walk at the proxy that wrote it: the client's
        // own entries to its left never speak for it.
        #expect(ClientAddress.resolve(remote: "10.0.0.5", forwardedFor: "6.6.6.6, unknown", trustedProxies: proxies) == "10.0.0.5")
        #expect(
            ClientAddress.resolve(
                remote: "10.0.0.5", forwardedFor: "6.6.6.6, bogus, 10.1.1.1", trustedProxies: proxies) == "10.1.1.1")
        // A dual-stack socket reports an IPv4 proxy as IPv4-mapped: it still matches its block.
        #expect(ClientAddress.resolve(remote: "::ffff:10.0.0.5", forwardedFor: "1.2.3.4", trustedProxies: proxies) == "1.2.3.4")
        #expect(ClientAddress.resolve(remote: "::ffff:203.0.113.9", forwardedFor: "1.2.3.4", trustedProxies: proxies) == "203.0.113.9")
    }

    @Test("limits key an IPv6 client by its /64, an IPv4-mapped one by its IPv4 address")
    func limitKey() {
        #expect(ClientAddress.limitKey("203.0.113.7") == "203.0.113.7")
        #expect(ClientAddress.limitKey("2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(ClientAddress.limitKey("2001:db8:1:2:ffff:ffff:ffff:ffff") == "2001:db8:1:2::/64")
        #expect(ClientAddress.limitKey("2001:DB8:1:2:aa::9") == "2001:db8:1:2::/64")
        #expect(ClientAddress.limitKey("2001:db8:1:3::1") == "2001:db8:1:3::/64")
        #expect(ClientAddress.limitKey("::ffff:198.51.100.4") == "198.51.100.4")
        #expect(ClientAddress.limitKey("::1") == "0:0:0:0::/64")
    }
}
