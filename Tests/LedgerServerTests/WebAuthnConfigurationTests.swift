import Foundation
import LedgerApp
import LedgerServer
import Testing

@Suite("Configuration: the passkeys' relying party")
struct WebAuthnConfigurationTests {
    @Test("unset, the relying party is the link base's host and origin, plus the Android app's certificates")
    func defaults() throws {
        let configuration = try LedgerConfiguration.fromEnvironment([
            "LEDGER_LINK_BASE_URL": "https://id.321.fit/", "LEDGER_PRODUCT_NAME": "321Fit",
            "LEDGER_ANDROID_PACKAGE": "fit.threetwoone",
            "LEDGER_ANDROID_CERT_SHA256": String(repeating: "AB:", count: 31) + "AB",
        ])
        #expect(configuration.relyingParty.id == "id.321.fit")
        #expect(
            configuration.relyingParty.origins == [
                "https://id.321.fit",
                "android:apk-key-hash:"
                    + Data(repeating: 0xAB, count: 32).base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: ""),
            ])
        #expect(configuration.relyingPartyName == "321Fit")
    }

    @Test("a link base with a path still gives its origin; one that cannot give a relying party is a warning, not a refusal")
    func defaultsThatCannotServe() throws {
        let withPath = try LedgerConfiguration.fromEnvironment(["LEDGER_LINK_BASE_URL": "https://321.fit/links"])
        #expect(withPath.relyingParty.origins == ["https://321.fit"] && withPath.warnings.allSatisfy { !$0.hasPrefix("passkeys") })
        let address = try LedgerConfiguration.fromEnvironment(["LEDGER_LINK_BASE_URL": "http://10.0.0.5:8080"])
        #expect(address.warnings.contains { $0.hasPrefix("passkeys:") && $0.contains("LEDGER_WEBAUTHN_RP_ID") })
    }

    @Test("set, the variables are the relying party; an origin may be any subdomain of the RP id")
    func explicit() throws {
        let configuration = try LedgerConfiguration.fromEnvironment([
            "LEDGER_WEBAUTHN_RP_ID": "321.fit", "LEDGER_WEBAUTHN_ORIGINS": "https://321.fit, https://app.321.fit:8443",
            "LEDGER_WEBAUTHN_RP_NAME": "321Fit Coach",
        ])
        #expect(configuration.relyingParty.id == "321.fit")
        #expect(configuration.relyingParty.origins == ["https://321.fit", "https://app.321.fit:8443"])
        #expect(configuration.relyingPartyName == "321Fit Coach")
        let local = try LedgerConfiguration.fromEnvironment([
            "LEDGER_WEBAUTHN_RP_ID": "localhost", "LEDGER_WEBAUTHN_ORIGINS": "http://localhost:8080",
        ])
        #expect(local.relyingParty.origins == ["http://localhost:8080"])
    }

    @Test(
        "an operator's mistake stops the start, naming the variable",
        arguments: [
            ["LEDGER_WEBAUTHN_RP_ID": "https://321.fit"],
            ["LEDGER_WEBAUTHN_RP_ID": "321.FIT"],
            ["LEDGER_WEBAUTHN_RP_ID": "321.fit", "LEDGER_WEBAUTHN_ORIGINS": "https://evil.example"],
            ["LEDGER_WEBAUTHN_RP_ID": "321.fit", "LEDGER_WEBAUTHN_ORIGINS": "https://not321.fit"],
            ["LEDGER_WEBAUTHN_RP_ID": "321.fit", "LEDGER_WEBAUTHN_ORIGINS": "http://321.fit"],
            ["LEDGER_WEBAUTHN_RP_ID": "321.fit", "LEDGER_WEBAUTHN_ORIGINS": "https://321.fit/login"],
            ["LEDGER_WEBAUTHN_RP_ID": "321.fit", "LEDGER_WEBAUTHN_ORIGINS": "android:apk-key-hash:"],
            ["LEDGER_WEBAUTHN_RP_ID": "321.fit", "LEDGER_WEBAUTHN_ORIGINS": " , "],
            ["LEDGER_WEBAUTHN_RP_ID": "10.0.0.5", "LEDGER_WEBAUTHN_ORIGINS": "https://10.0.0.5"],
            ["LEDGER_WEBAUTHN_RP_ID": "fit"],
            ["LEDGER_WEBAUTHN_RP_ID": "321 .fit"],
            ["LEDGER_WEBAUTHN_ORIGINS": "https://10.0.0.5", "LEDGER_LINK_BASE_URL": "https://10.0.0.5"],
        ])
    func refused(_ environment: [String: String]) throws {
        #expect {
            try LedgerConfiguration.fromEnvironment(environment)
        } throws: { error in
            (error as? ConfigurationError)?.message.contains("LEDGER_WEBAUTHN_") == true
        }
    }
}
