import Foundation
import LedgerServer
import LedgerWebAuthn

/// The support console's origin (docs/support.md "The console"): `LEDGER_CONSOLE_ORIGIN`, else
/// the origin of `LEDGER_LINK_BASE_URL`. Its host is the staff passkeys' RP id, so the console
/// needs an origin a browser offers passkeys on: https, or this machine.
extension LedgerConfiguration {
    /// The console's origin, serialized (`https://support.321.fit`); nil when the link base
    /// gives none.
    public var consoleOrigin: String? {
        consoleOriginSetting
            ?? URL(string: linkBaseURL).flatMap { url in
                guard let scheme = url.scheme, let host = url.host else { return nil }
                return RelyingParty.serializedOrigin(scheme + "://" + host + (url.port.map { ":\($0)" } ?? ""))
            }
    }

    /// Reads `LEDGER_CONSOLE_ORIGIN`: an origin (no path), https or on this machine, whose host
    /// can be an RP id (a domain, never an IP address).
    mutating func readConsole(string: (String) -> String?) throws {
        guard let raw = string("LEDGER_CONSOLE_ORIGIN") else { return }
        guard let origin = RelyingParty.serializedOrigin(raw), !origin.hasPrefix("android:"), origin == raw.lowercased() else {
            throw ConfigurationError("LEDGER_CONSOLE_ORIGIN must be an origin (scheme://host[:port], no path), got '\(raw)'")
        }
        guard Self.isRelyingPartyID(Self.host(of: origin) ?? ""), Self.isPrivateToHost(origin) else {
            throw ConfigurationError(
                "LEDGER_CONSOLE_ORIGIN must be https on a domain (or http on localhost): staff sign in with passkeys there, got '\(raw)'")
        }
        consoleOriginSetting = origin
    }
}
