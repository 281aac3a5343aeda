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
