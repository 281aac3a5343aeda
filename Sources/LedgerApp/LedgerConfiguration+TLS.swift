import Foundation
import LedgerServer

/// HTTPS served by the service itself (docs/going-live.md "TLS"): `LEDGER_TLS_CERT_FILE` and
/// `LEDGER_TLS_KEY_FILE`, PEM files read at start and again on `SIGHUP` (`TLSCertificates`).
/// Without them the service speaks plain HTTP, and outside development says at start that TLS
/// must end in front of it.
extension LedgerConfiguration {
    /// The certificate chain and its private key, as PEM files.
    public struct TLSFiles: Sendable, Equatable {
        /// The leaf certificate first, then the intermediates (as Let's Encrypt's `fullchain.pem`).
        public var certificateFile: String
        public var keyFile: String

        public init(certificateFile: String, keyFile: String) {
            self.certificateFile = certificateFile
            self.keyFile = keyFile
        }
    }

    /// `Strict-Transport-Security`'s value on every answer over HTTPS: a year, this host only
    /// (`includeSubDomains` would bind every sibling host to HTTPS, which is not ours to decide).
    public static let strictTransportSecurity = "max-age=31536000"

    /// Reads `LEDGER_TLS_CERT_FILE` and `LEDGER_TLS_KEY_FILE`: both or neither.
    mutating func readTLS(string: (String) -> String?) throws {
        switch (string("LEDGER_TLS_CERT_FILE"), string("LEDGER_TLS_KEY_FILE")) {
        case (nil, nil): tls = nil
        case (let certificate?, let key?): tls = TLSFiles(certificateFile: certificate, keyFile: key)
        default: throw ConfigurationError("LEDGER_TLS_CERT_FILE and LEDGER_TLS_KEY_FILE go together: set both or neither")
        }
    }

    /// What `serve` says at start about TLS (not among `warnings`, which list unsafe settings:
    /// plain HTTP behind a proxy is a sound one); nil when it serves HTTPS itself, or in development.
    public var tlsWarning: String? {
        guard tls == nil, !developmentMode else { return nil }
        return "serving plain HTTP (LEDGER_TLS_CERT_FILE and LEDGER_TLS_KEY_FILE unset): TLS must end in front of this service, "
            + "at a load balancer or proxy, or tokens and passwords cross the network in the clear"
    }
}
