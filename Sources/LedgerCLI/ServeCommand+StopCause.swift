import Foundation
import LedgerApp
import LedgerDelivery
import NIOCore

extension ServeCommand {
    /// Why the service group stopped, as one line an operator can act on: a listening socket
    /// that cannot be had is named with its address and what to change; anything else is its
    /// own description, on one line.
    static func stopCause(_ error: any Error, configuration: LedgerConfiguration) -> String {
        let addresses = ([configuration.port] + (configuration.metricsPort.map { [$0] } ?? [])).map { "\(configuration.host):\($0)" }
        let listening = addresses.joined(separator: " or ")
        if let io = error as? IOError {
            switch io.errnoCode {
            case EADDRINUSE:
                return "\(listening) is already in use by another process: stop it, or choose another port (--port, LEDGER_PORT)"
            case EACCES:
                return "not allowed to listen on \(listening) (ports below 1024 need privileges): choose another port (--port, LEDGER_PORT)"
            case EADDRNOTAVAIL:
                return "\(configuration.host) is not an address of this machine: choose another with --host"
            default:
                break
            }
        }
        // Any other error in its own words, on one line and with no credential in it (a URL's
        // password, a token a provider echoed).
        return ProviderErrorText.sanitized(String(describing: error))
    }
}
