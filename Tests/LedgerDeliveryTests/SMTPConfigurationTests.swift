import Foundation
import Testing

@testable import LedgerDelivery

@Suite("SMTP configuration (LEDGER_SMTP_URL)")
struct SMTPConfigurationTests {
    static let password = "violet-harbor-91"

    @Test("smtp:// is STARTTLS on 587, smtps:// implicit TLS on 465, user and password percent-decoded")
    func schemes() throws {
        let startTLS = try SMTPConfiguration.parse(url: "smtp://mailer%40321.fit:violet%2Fharbor%3A91@SMTP.Example.org")
        #expect(startTLS.security == .startTLS && startTLS.host == "smtp.example.org" && startTLS.port == 587)
        #expect(startTLS.username == "mailer@321.fit" && startTLS.password == "violet/harbor:91")
        let implicit = try SMTPConfiguration.parse(url: "smtps://apikey:\(Self.password)@smtp.example.org")
        #expect(implicit.security == .implicitTLS && implicit.port == 465 && implicit.password == Self.password)
        let custom = try SMTPConfiguration.parse(url: " smtp://u:\(Self.password)@[2001:db8::25]:2525/ \n")
        #expect(custom.host == "2001:db8::25" && custom.port == 2525)
        #expect(custom.curlURL(heloName: "321.fit") == "smtp://[2001:db8::25]:2525/321.fit")
        #expect(custom.maximumConnections == 4 && custom.connectTimeout == .seconds(10) && custom.sendTimeout == .seconds(30))
    }

    @Test("an unencoded @, / or ? in the password is still the password")
    func lenientPassword() throws {
        let configuration = try SMTPConfiguration.parse(url: "smtp://user:p@ss/w?rd@smtp.example.org:587")
        #expect(configuration.password == "p@ss/w?rd" && configuration.host == "smtp.example.org")
    }

    @Test("tls=none only for a loopback host and without credentials")
    func plainText() throws {
        for host in ["127.0.0.1", "[::1]", "localhost"] {
            let configuration = try SMTPConfiguration.parse(url: "smtp://\(host):2525?tls=none")
            #expect(configuration.security == .none && configuration.isLoopback)
        }
        let remote = #expect(throws: SMTPConfigurationError.self) {
            try SMTPConfiguration.parse(url: "smtp://mail.example.org:25?tls=none")
        }
        #expect(remote?.description.contains("loopback") == true)
        let withCredentials = #expect(throws: SMTPConfigurationError.self) {
            try SMTPConfiguration.parse(url: "smtp://user:\(Self.password)@127.0.0.1:2525?tls=none")
        }
        #expect(withCredentials?.description.contains("credentials") == true)
        #expect(throws: SMTPConfigurationError.self) { try SMTPConfiguration.parse(url: "smtps://127.0.0.1:2525?tls=none") }
        #expect(throws: SMTPConfigurationError.self) { try SMTPConfiguration.parse(url: "smtp://127.0.0.2:2525?tls=none") }
    }

    @Test("invalid URLs are refused with LEDGER_SMTP_URL named and the password never quoted")
    func invalid() {
        let bad = [
            "", "http://user:\(Self.password)@smtp.example.org", "smtp://", "smtp://user:\(Self.password)@", "smtp://user@smtp.example.org",
            "smtp://user:@smtp.example.org", "smtp://:\(Self.password)@smtp.example.org", "smtp://user:\(Self.password)@smtp.example.org:0",
            "smtp://user:\(Self.password)@smtp.example.org:99999", "smtp://user:\(Self.password)@smtp.example.org:+25",
            "smtp://user:\(Self.password)@smtp.example.org/path", "smtp://user:\(Self.password)@smtp.example.org?tls=off",
            "smtp://user:\(Self.password)@smtp.example.org?tls=none", "smtp://user:viol%ZZet@smtp.example.org",
            "smtp://user:\(Self.password)@smtp example.org", "smtp://user:pass%0Aword@smtp.example.org",
            "smtp://user:\(Self.password)@smtp_example.org", "smtp://user:\(Self.password)@[::1",
        ]
        for url in bad {
            let error = #expect(throws: SMTPConfigurationError.self, "\(url.count) characters") { try SMTPConfiguration.parse(url: url) }
            #expect(error?.description.contains("LEDGER_SMTP_URL") == true)
            #expect(error?.description.contains(Self.password) == false)
            #expect(error?.description.contains("violet") == false)
        }
    }

    @Test("LEDGER_SMTP_CA_FILE must be a readable PEM certificate")
    func caFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("smtp-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pem = directory.appendingPathComponent("ca.pem").path
        try "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".write(toFile: pem, atomically: true, encoding: .utf8)
        let notPEM = directory.appendingPathComponent("ca.txt").path
        try "not a certificate".write(toFile: notPEM, atomically: true, encoding: .utf8)

        let url = "smtp://user:\(Self.password)@smtp.example.org"
        #expect(try SMTPConfiguration.parse(url: url, caFile: pem).caFile == pem)
        #expect(try SMTPConfiguration.parse(url: url, caFile: "").caFile == nil)
        for path in [notPEM, directory.appendingPathComponent("missing.pem").path] {
            let error = #expect(throws: SMTPConfigurationError.self) { try SMTPConfiguration.parse(url: url, caFile: path) }
            #expect(error?.description.hasPrefix("LEDGER_SMTP_CA_FILE") == true)
        }
        #expect(throws: SMTPConfigurationError.self) { try SMTPConfiguration.parse(url: "smtp://localhost:25?tls=none", caFile: pem) }
    }

    @Test("its description hides the password")
    func description() throws {
        let configuration = try SMTPConfiguration.parse(url: "smtps://apikey:\(Self.password)@smtp.example.org")
        #expect(configuration.description == "smtps://apikey:***@smtp.example.org:465")
        #expect(!"\(configuration)".contains(Self.password))
    }
}
