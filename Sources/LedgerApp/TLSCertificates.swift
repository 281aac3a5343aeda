import Foundation
import LedgerServer
import NIOSSL
import Synchronization
import X509

/// The certificate chain and key HTTPS serves (docs/going-live.md "TLS"), read from
/// `LEDGER_TLS_CERT_FILE` and `LEDGER_TLS_KEY_FILE` at start and again on `SIGHUP`
/// (`TLSReloadService`). Each handshake takes the pair current when it starts
/// (`TLSConfiguration.sslContextCallback`), so a reload reaches the next connection at once and
/// leaves open ones, and the requests on them, as they are. A reload that fails (a file half
/// written, a key that is not the certificate's) keeps the pair in use.
public final class TLSCertificates: Sendable {
    /// A chain with its key, checked to belong together.
    public struct Pair: Sendable {
        public let chain: [NIOSSLCertificate]
        public let key: NIOSSLPrivateKey
        /// The leaf's expiry, for the log.
        public let notAfter: Date
        /// What each handshake applies, made once per reload rather than once per handshake.
        let override: NIOSSLContextConfigurationOverride

        init(chain: [NIOSSLCertificate], key: NIOSSLPrivateKey, notAfter: Date) {
            (self.chain, self.key, self.notAfter) = (chain, key, notAfter)
            var override = NIOSSLContextConfigurationOverride()
            override.certificateChain = chain.map { .certificate($0) }
            override.privateKey = .privateKey(key)
            self.override = override
        }
    }

    public let files: LedgerConfiguration.TLSFiles
    private let current: Mutex<Pair>

    /// When "now" is, for the certificate's validity (tests move it).
    let now: @Sendable () -> Date

    /// Reads both files; `ConfigurationError` naming what is wrong with them.
    public init(files: LedgerConfiguration.TLSFiles, now: @escaping @Sendable () -> Date = { Date() }) throws {
        self.files = files
        self.now = now
        current = Mutex(try Self.read(files, now: now()))
    }

    /// The pair handshakes use now.
    public var pair: Pair { current.withLock { $0 } }

    /// Reads both files again and, when they make a pair, serves it from the next handshake on.
    @discardableResult
    public func reload() throws -> Pair {
        let pair = try Self.read(files, now: now())
        current.withLock { $0 = pair }
        return pair
    }

    /// The server's TLS settings: TLS 1.2 at least, and the current pair at every handshake.
    public func serverConfiguration() -> TLSConfiguration {
        let pair = pair
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: pair.chain.map { .certificate($0) }, privateKey: .privateKey(pair.key))
        configuration.minimumTLSVersion = .tlsv12
        configuration.sslContextCallback = { [self] _, promise in promise.succeed(self.pair.override) }
        return configuration
    }

    /// The files as a pair: PEM certificates (the leaf first, valid `now`: a renewal that put
    /// an expired or future certificate in place must not replace one that works), and a PEM
    /// key whose public key is the leaf's. Nothing of the key reaches an error message.
    static func read(_ files: LedgerConfiguration.TLSFiles, now: Date) throws -> Pair {
        let chain: [NIOSSLCertificate]
        let leaf: Certificate
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(Array(try Data(contentsOf: URL(fileURLWithPath: files.certificateFile))))
            guard let first = chain.first else { throw ConfigurationError("no certificate in it") }
            leaf = try Certificate(derEncoded: try first.toDERBytes())
        } catch {
            throw ConfigurationError("LEDGER_TLS_CERT_FILE (\(files.certificateFile)) is not a readable PEM certificate chain")
        }
        let keyPEM: String
        let key: NIOSSLPrivateKey
        let publicKey: Certificate.PublicKey
        do {
            keyPEM = try String(contentsOfFile: files.keyFile, encoding: .utf8)
            key = try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem)
            publicKey = try Certificate.PrivateKey(pemEncoded: keyPEM).publicKey
        } catch {
            throw ConfigurationError("LEDGER_TLS_KEY_FILE (\(files.keyFile)) is not a readable PEM private key")
        }
        guard publicKey == leaf.publicKey else {
            throw ConfigurationError("LEDGER_TLS_KEY_FILE is not the key of LEDGER_TLS_CERT_FILE's first certificate")
        }
        guard leaf.notValidBefore <= now, now < leaf.notValidAfter else {
            throw ConfigurationError(
                "LEDGER_TLS_CERT_FILE's certificate is not valid now: it is valid from \(leaf.notValidBefore) to \(leaf.notValidAfter)")
        }
        return Pair(chain: chain, key: key, notAfter: leaf.notValidAfter)
    }
}
