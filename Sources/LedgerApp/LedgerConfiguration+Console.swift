import Foundation
import LedgerServer
import LedgerWebAuthn

/// The support console's origin (docs/support.md "The console"): `LEDGER_CONSOLE_ORIGIN`. Unset,
/// the console is off, but for a link base on this machine (development), whose origin it takes:
/// on a public host it must be set, on an origin of its own, so that the apps' pages share
/// neither its origin nor its passkeys' relying party.
extension LedgerConfiguration {
    /// The console's origin, serialized (`https://support.321.fit`); nil when the console is off.
    public var consoleOrigin: String? {
        consoleOriginSetting
            ?? URL(string: linkBaseURL).flatMap { url in
                guard let scheme = url.scheme, let host = url.host, scheme == "http", Self.isPrivateToHost(linkBaseURL) else { return nil }
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
