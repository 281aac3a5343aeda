import Foundation
import LedgerCore
import LedgerServer
import LedgerWebAuthn

/// Passkeys' relying party (API.md "Passkeys"): `LEDGER_WEBAUTHN_RP_ID`, `LEDGER_WEBAUTHN_ORIGINS`
/// and `LEDGER_WEBAUTHN_RP_NAME`.
extension LedgerConfiguration {
    /// The relying party as configured. Unset, the RP id is the host of `LEDGER_LINK_BASE_URL`
    /// (the pages the service serves are on it), the origins are that URL's origin and the
    /// Android app's signing certificates (`LEDGER_ANDROID_CERT_SHA256`, as
    /// `android:apk-key-hash:`), and the name is `LEDGER_PRODUCT_NAME`.
    public var relyingParty: RelyingParty {
        RelyingParty(id: webAuthnRPID ?? Self.host(of: linkBaseURL) ?? "localhost", origins: webAuthnOrigins ?? defaultWebAuthnOrigins)
    }

    /// The name authenticators show beside a passkey.
    public var relyingPartyName: String { webAuthnRPName ?? productName }

    var defaultWebAuthnOrigins: [String] {
        [RelyingParty.serializedOrigin(linkBaseURL.hasSuffix("/") ? String(linkBaseURL.dropLast()) : linkBaseURL)].compactMap { $0 }
            + apps.androidCertificates.compactMap(Self.apkKeyHash)
    }

    /// `android:apk-key-hash:` of a certificate fingerprint as assetlinks.json takes it (hex
    /// pairs, colons or not).
    static func apkKeyHash(_ fingerprint: String) -> String? {
        let hex = fingerprint.filter { $0 != ":" }
        guard hex.count == 64, let bytes = Hex.decode(hex) else { return nil }
        return "android:apk-key-hash:" + Base64URL.encode(bytes)
    }

    static func host(of url: String) -> String? {
        URL(string: url)?.host?.lowercased()
    }

    /// Reads the three variables and refuses what no browser would accept: an origin that is
    /// not one (a path, another scheme), a web origin outside the RP id's domain, or plain http
    /// anywhere but this machine.
    mutating func readWebAuthn(string: (String) -> String?, list: (String) -> [String]?) throws {
        if let id = string("LEDGER_WEBAUTHN_RP_ID") {
            guard id == id.lowercased(), !id.contains("/"), !id.contains(":"), !id.hasPrefix("."), !id.hasSuffix("."), !id.isEmpty,
                id.count <= 253
            else {
                throw ConfigurationError("LEDGER_WEBAUTHN_RP_ID must be a domain in lower case (such as 321.fit), got '\(id)'")
            }
            webAuthnRPID = id
        }
        if let origins = list("LEDGER_WEBAUTHN_ORIGINS") {
            guard !origins.isEmpty else { throw ConfigurationError("LEDGER_WEBAUTHN_ORIGINS lists no origin") }
            webAuthnOrigins = origins
        }
        webAuthnRPName = string("LEDGER_WEBAUTHN_RP_NAME")
        let rpID = relyingParty.id
        for origin in webAuthnOrigins ?? defaultWebAuthnOrigins {
            guard let serialized = RelyingParty.serializedOrigin(origin) else {
                throw ConfigurationError(
                    "LEDGER_WEBAUTHN_ORIGINS: '\(origin)' is not an origin (scheme://host[:port], or android:apk-key-hash:<base64url>)")
            }
            guard !serialized.hasPrefix("android:") else { continue }
            let host = Self.host(of: serialized) ?? ""
            guard host == rpID || host.hasSuffix("." + rpID) else {
                throw ConfigurationError(
                    "LEDGER_WEBAUTHN_ORIGINS: '\(origin)' is not on \(rpID) (LEDGER_WEBAUTHN_RP_ID): browsers refuse passkeys there")
            }
            guard serialized.hasPrefix("https://") || Self.isPrivateToHost(serialized) else {
                throw ConfigurationError(
                    "LEDGER_WEBAUTHN_ORIGINS: '\(origin)' is not https: browsers offer passkeys only there (and on localhost)")
            }
        }
    }
}
