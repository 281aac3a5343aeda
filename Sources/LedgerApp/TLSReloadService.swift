import Logging
import ServiceLifecycle
import UnixSignals

/// Reads the TLS files again on every `SIGHUP` (as nginx and HAProxy do), so a renewed
/// certificate is served without a restart; a reload that fails is logged and changes nothing.
/// Without TLS it still takes the signal, which would otherwise stop the service.
struct TLSReloadService: Service {
    let certificates: TLSCertificates?
    let logger: Logger

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            guard let certificates else {
                logger.info("SIGHUP: no TLS files to reload (LEDGER_TLS_CERT_FILE unset)")
                continue
            }
            do {
                let pair = try certificates.reload()
                logger.info("tls: certificate reloaded", metadata: ["not_after": "\(pair.notAfter)"])
            } catch {
                logger.error("tls: reload refused, the previous certificate stays: \(error)")
            }
        }
    }
}
