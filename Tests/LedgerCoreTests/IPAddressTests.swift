import LedgerCore
import Testing

@Suite("IP addresses: blocks, public or not, resolution")
struct IPAddressTests {
    @Test("CIDR blocks match IPv4 and IPv6 by prefix")
    func cidr() throws {
        let private10 = try #require(CIDR("10.0.0.0/8"))
        #expect(private10.contains("10.200.3.4"))
        #expect(!private10.contains("11.0.0.1"))
        #expect(!private10.contains("::1"))
        #expect(try #require(CIDR("192.168.1.0/23")).contains("192.168.0.77"))
        #expect(try #require(CIDR("2001:db8::/32")).contains("2001:db8:1::5"))
        #expect(try #require(CIDR("127.0.0.1")).contains("127.0.0.1"))
        #expect(CIDR("10.0.0.0/33") == nil)
        #expect(CIDR("not-an-ip") == nil)
    }

    @Test(
        "loopback, private, shared, link-local, metadata, multicast and reserved addresses are not public; IPv4 inside IPv6 is judged as IPv4"
    )
    func publicAddresses() {
        for address in [
            "127.0.0.1", "127.9.9.9", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.0.1", "169.254.169.254", "100.64.0.1",
            "0.0.0.0", "224.0.0.1", "255.255.255.255", "::", "::1", "fd00:ec2::254", "fc00::1", "fe80::1", "ff02::1",
            "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::808:808", "2002:7f00:1::1",
            "2002:a9fe:a9fe::1", "2001:0:4136:e378::1", "not an address",
            // IPv6 outside global unicast, whatever a stack makes of it: IPv4-compatible,
            // IPv4-translated (SIIT), SRv6 and other unassigned space; special-purpose blocks
            // inside it (IETF assignments, documentation); NAT64 and 6to4 of private IPv4.
            "::127.0.0.1", "::8.8.8.8", "::ffff:0:127.0.0.1", "::ffff:0:8.8.8.8", "5f00::1", "4000::1", "1::1", "100::1",
            "2001:2::1", "2001:10::1", "2001:db8::1", "3fff::1", "64:ff9b::7f00:1", "64:ff9b::a00:1", "2002:c0a8:101::1",
            "192.88.99.1", "240.0.0.1",
        ] {
            #expect(!IPAddress.isPublic(address), "\(address)")
        }
        for address in [
            "93.184.215.14", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "2002:808:808::1",
            "2a00:1450:4001:80b::200e", "3ffe::1", "64:ff9b::808:808",
        ] {
            #expect(IPAddress.isPublic(address), "\(address)")
        }
    }

    @Test("a host is an IPv4 address, a bracketed IPv6 address or a plain DNS name; nothing a client could read otherwise")
    func plainHosts() {
        for host in [
            "93.184.215.14", "[2606:4700:4700::1111]", "hooks.example.com", "hooks.example.com.", "a-b.c0", "2130706433", "localhost",
        ] {
            #expect(IPAddress.isPlainHost(host), "\(host)")
        }
        for host in [
            "[rebind.attacker.example]", "[hooks.example.com]", "[fe80::1%eth0]", "[]", "[::1", "::1", "a..b", "-a.example", "a-.example",
            "a b.example", "a%2Fb.example", "hooks_1.example", "ex\u{0}ample.com", "", ".", String(repeating: "a", count: 64) + ".example",
            "bücher.example",
        ] {
            #expect(!IPAddress.isPlainHost(host), "\(host)")
        }
    }

    @Test("a URL's host is read from its text and must be what Foundation reads: no percent-encoding, no bracketed name, no zone")
    func plainURLHosts() {
        let hosts: [(String, String?)] = [
            ("https://hooks.example.com/in", "hooks.example.com"), ("http://user:pw@93.184.215.14:8443/x?y#z", "93.184.215.14"),
            ("http://[2606:4700::1111]:80/", "2606:4700::1111"), ("http://HOOKS.example.com./", "HOOKS.example.com."),
            ("http://%5Brebind.attacker.example%5D/hook", nil), ("http://[hooks.example.com]/hook", nil), ("http://a%20b.example/", nil),
            ("http://[fe80::1%25eth0]/", nil), ("http://ho%6Fks.example.com/", nil), ("http://public.example@127.0.0.1/", "127.0.0.1"),
            ("not a url", nil),
        ]
        for (url, host) in hosts { #expect(IPAddress.plainHost(ofURL: url) == host, "\(url)") }
    }

    @Test("resolution: a literal is itself (brackets too), localhost is loopback, a name that does not exist is nothing")
    func resolution() async {
        #expect(await IPAddress.resolve("93.184.215.14") == ["93.184.215.14"])
        #expect(await IPAddress.resolve("[::1]") == ["::1"])
        // Brackets are an IPv6 literal's only: a bracketed name or IPv4 address resolves to nothing.
        #expect(await IPAddress.resolve("[localhost]").isEmpty)
        #expect(await IPAddress.resolve("[127.0.0.1]").isEmpty)
        let local = await IPAddress.resolve("localhost")
        #expect(!local.isEmpty && local.allSatisfy { !IPAddress.isPublic($0) })
        #expect(await IPAddress.resolve("no-such-host.invalid").isEmpty)
        // inet_aton's spellings of loopback resolve to loopback, and are judged as it.
        for spelling in ["2130706433", "0x7f000001", "0x7f.1", "0177.0.0.1", "127.1"] {
            let addresses = await IPAddress.resolve(spelling)
            #expect(addresses == ["127.0.0.1"], "\(spelling)")
            #expect(!addresses.contains(where: IPAddress.isPublic), "\(spelling)")
        }
    }
}
