import Foundation
import LedgerCore
import LedgerServer
import LedgerWebAuthn

/// Passkeys' relying party (docs/passkeys.md): `LEDGER_WEBAUTHN_RP_ID`, `LEDGER_WEBAUTHN_ORIGINS`
/// and `LEDGER_WEBAUTHN_RP_NAME`.
extension LedgerConfiguration {
    /// Why passkeys will not work from the web as configured, when the relying party was left to
    /// its defaults and they cannot serve (`serve` logs it at start).
    var webAuthnWarning: String? {
        guard webAuthnRPID == nil, webAuthnOrigins == nil else { return nil }
        let rp = relyingParty
        let web = rp.origins.filter { !$0.hasPrefix("android:") }
        guard !Self.isRelyingPartyID(rp.id) || web.isEmpty || !web.allSatisfy({ $0.hasPrefix("https://") || Self.isPrivateToHost($0) })
        else { return nil }
        return "passkeys: LEDGER_LINK_BASE_URL cannot give the relying party (RP id '\(rp.id)', origins \(web)); "
            + "set LEDGER_WEBAUTHN_RP_ID and LEDGER_WEBAUTHN_ORIGINS"
    }

    /// The relying party as configured. Unset, the RP id is the host of `LEDGER_LINK_BASE_URL`
    /// (the pages the service serves are on it), the origins are that URL's origin and the
    /// Android app's signing certificates (`LEDGER_ANDROID_CERT_SHA256`, as
    /// `android:apk-key-hash:`), and the name is `LEDGER_PRODUCT_NAME`.
    public var relyingParty: RelyingParty {
        RelyingParty(id: webAuthnRPID ?? Self.host(of: linkBaseURL) ?? "localhost", origins: webAuthnOrigins ?? defaultWebAuthnOrigins)
    }

    /// The name authenticators show beside a passkey.
    public var relyingPartyName: String { webAuthnRPName ?? productName }

    /// The link base's origin (its scheme, host and port: a path is not part of an origin) and
    /// the Android app's certificates.
    var defaultWebAuthnOrigins: [String] {
        let url = URL(string: linkBaseURL)
        let base = url.flatMap { url -> String? in
            guard let scheme = url.scheme, let host = url.host else { return nil }
            return RelyingParty.serializedOrigin(scheme + "://" + host + (url.port.map { ":\($0)" } ?? ""))
        }
        return [base].compactMap { $0 } + apps.androidCertificates.compactMap(Self.apkKeyHash)
    }

    /// Whether `id` can be a WebAuthn RP id: a domain of letters, digits and hyphens with at
    /// least two labels (or `localhost`), never an IP address, which browsers refuse.
    static func isRelyingPartyID(_ id: String) -> Bool {
        let labels = id.split(separator: ".", omittingEmptySubsequences: false)
        let wellFormed =
            !id.isEmpty && id.count <= 253
            && labels.allSatisfy { label in
                !label.isEmpty && label.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                    && label.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
            }
        let numeric = labels.last.map { $0.allSatisfy(\.isNumber) } ?? true
        return wellFormed && !numeric && (labels.count >= 2 || id == "localhost")
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
            guard Self.isRelyingPartyID(id) else {
                throw ConfigurationError(
                    "LEDGER_WEBAUTHN_RP_ID must be a domain in lower case (such as 321.fit, or localhost), not an IP address, got '\(id)'")
            }
            webAuthnRPID = id
        }
        if let origins = list("LEDGER_WEBAUTHN_ORIGINS") {
            guard !origins.isEmpty else { throw ConfigurationError("LEDGER_WEBAUTHN_ORIGINS lists no origin") }
            webAuthnOrigins = origins
        }
        webAuthnRPName = string("LEDGER_WEBAUTHN_RP_NAME")
        // Unset, the relying party follows the link base; one that cannot be (an IP address, a
        // path-only URL, plain http off this host) leaves passkeys off the web with a warning
        // (`warnings`) rather than stopping a service that was configured before passkeys.
        guard webAuthnRPID != nil || webAuthnOrigins != nil else { return }
        let rpID = relyingParty.id
        guard Self.isRelyingPartyID(rpID) else {
            throw ConfigurationError(
                "LEDGER_WEBAUTHN_RP_ID is unset and the host of LEDGER_LINK_BASE_URL ('\(rpID)') cannot be one: set LEDGER_WEBAUTHN_RP_ID")
        }
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
