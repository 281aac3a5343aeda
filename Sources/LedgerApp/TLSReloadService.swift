import Logging
import ServiceLifecycle
import UnixSignals

/// Reads the TLS files again on every `SIGHUP` (as nginx and HAProxy do), so a renewed
/// certificate is served without a restart; a reload that fails is logged and changes nothing.
struct TLSReloadService: Service {
    let certificates: TLSCertificates
    let logger: Logger

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            do {
                let pair = try certificates.reload()
                logger.info("tls: certificate reloaded", metadata: ["not_after": "\(pair.notAfter)"])
            } catch {
                logger.error("tls: reload refused, the previous certificate stays: \(error)")
            }
        }
    }
}
