import ArgumentParser
import Foundation
import LedgerCrypto

/// Reading and writing the PEM key files of checkpoints.
enum KeyFiles {
    static func privateKey(at path: String) throws -> Ed25519.PrivateKey {
        do {
            return try Ed25519.PrivateKey(pemRepresentation: try String(contentsOfFile: path, encoding: .utf8))
        } catch let error as CryptoError {
            throw ValidationError("\(path): \(error.reason)")
        } catch {
            throw ValidationError("cannot read the private key file \(path)")
        }
    }

    static func publicKey(at path: String) throws -> Ed25519.PublicKey {
        do {
            return try Ed25519.PublicKey(pemRepresentation: try String(contentsOfFile: path, encoding: .utf8))
        } catch let error as CryptoError {
            throw ValidationError("\(path): \(error.reason)")
        } catch {
            throw ValidationError("cannot read the public key file \(path)")
        }
    }

    /// Creates `path` with `mode` from the start (never a moment world-readable) and refuses
    /// to replace an existing file: overwriting a signing key by mistake would orphan every
    /// checkpoint signed with it.
    static func writeNew(_ text: String, to path: String, mode: mode_t) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, mode)
        guard descriptor >= 0 else {
            throw ValidationError("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
    }
}
