import Crypto
import CryptoExtras
import Foundation
import LedgerCore
import LedgerWebAuthn
import Synchronization

/// A software authenticator and client in one, for tests and the benchmark: it makes credentials
/// (ES256, EdDSA, RS256) and answers with the JSON a browser's `toJSON()` gives, and can be told
/// to misbehave (another origin or RP id, flags, counter, client data type) to exercise each check.
public final class SoftAuthenticator: Sendable {
    /// The AAGUID it reports (zeros, as under attestation "none").
    public let aaguid: [UInt8]
    /// The signature counters and the credentials made: a test may share one authenticator
    /// between tasks.
    private let state = Mutex<(counters: [[UInt8]: UInt32], stored: [SoftCredential])>(([:], []))

    public init(aaguid: [UInt8] = [UInt8](repeating: 0, count: 16)) {
        self.aaguid = aaguid
    }

    /// The credentials made so far, oldest first.
    public var credentials: [SoftCredential] {
        state.withLock { $0.stored }
    }

    /// The stored signature counter of `credential`.
    public func signCount(of credential: SoftCredential) -> UInt32 {
        state.withLock { $0.counters[credential.id] ?? 0 }
    }

    /// `navigator.credentials.create()`: a new credential for `rpID` and its registration response.
    /// `clientDataType`, `crossOrigin` and `topOrigin` alter the client data (`clientDataTail`:
    /// raw members appended to it, `,"origin":"…"` repeating a key), `extensions` adds
    /// extension outputs (ED), `credentialID` replaces the random 32-byte id.
    public func makeCredential(
        rpID: String, origin: String, challenge: [UInt8], userHandle: [UInt8], algorithm: COSEAlgorithm = .es256,
        attestation: SoftAttestation = .none, flags: SoftFlags = SoftFlags(), signCount: UInt32 = 0,
        clientDataType: String = "webauthn.create", crossOrigin: Bool? = false, topOrigin: String? = nil,
        extensions: CBORValue? = nil, credentialID: [UInt8]? = nil, transports: [String] = ["internal", "hybrid"],
        clientDataTail: String = ""
    ) -> (response: RegistrationResponseJSON, credential: SoftCredential) {
        let id = credentialID ?? Self.randomBytes(32)
        let (privateKey, publicKey) = Self.makeKey(algorithm)
        let credential = SoftCredential(
            id: id, rpID: rpID, origin: origin, userHandle: userHandle, algorithm: algorithm, publicKey: publicKey, flags: flags,
            privateKey: privateKey)

        var authData = Self.header(
            rpID: rpID, flags: flags.byte(attestedCredentialData: true, extensionData: extensions != nil), signCount: signCount)
        authData += aaguid
        authData += [UInt8(id.count >> 8 & 0xFF), UInt8(id.count & 0xFF)]
        authData += id
        authData += publicKey
        if let extensions { authData += extensions.encoded }

        let clientDataJSON = Self.clientDataJSON(
            type: clientDataType, challenge: challenge, origin: origin, crossOrigin: crossOrigin, topOrigin: topOrigin, tail: clientDataTail
        )
        let signed = authData + Array(SHA256.hash(data: clientDataJSON))
        let (format, statement) = Self.statement(attestation, credential: credential, signed: signed)
        // CTAP2's canonical order of the keys: by length, then bytewise ("fmt", "attStmt", "authData").
        let attestationObject = CBORValue.map([
            (.text("fmt"), .text(format)), (.text("attStmt"), statement), (.text("authData"), .bytes(authData)),
        ])

        state.withLock { state in
            state.counters[id] = signCount
            state.stored.append(credential)
        }
        let response = RegistrationResponseJSON(
            id: Base64URL.encode(id), rawId: Base64URL.encode(id),
            response: AuthenticatorAttestationResponseJSON(
                clientDataJSON: Base64URL.encode(clientDataJSON), attestationObject: Base64URL.encode(attestationObject.encoded),
                transports: transports, publicKeyAlgorithm: algorithm.rawValue, authenticatorData: Base64URL.encode(authData)),
            authenticatorAttachment: "platform")
        return (response, credential)
    }

    /// `navigator.credentials.get()` with `credential`: an assertion signed by its key. `rpID`,
    /// `origin` and `flags` default to the credential's; `userHandle` to its own (`includeUserHandle`
    /// false leaves it out); `signCount` nil increments the stored counter, a value is used as is
    /// (0 plays a synced passkey) and becomes the stored one.
    public func getAssertion(
        credential: SoftCredential, challenge: [UInt8], rpID: String? = nil, origin: String? = nil, userHandle: [UInt8]? = nil,
        includeUserHandle: Bool = true, flags: SoftFlags? = nil, signCount: UInt32? = nil, clientDataType: String = "webauthn.get",
        crossOrigin: Bool? = false, topOrigin: String? = nil, extensions: CBORValue? = nil, clientDataTail: String = ""
    ) -> AuthenticationResponseJSON {
        let count = state.withLock { state in
            let next = signCount ?? (state.counters[credential.id] ?? 0) &+ 1
            state.counters[credential.id] = next
            return next
        }
        let flagsByte = (flags ?? credential.flags).byte(attestedCredentialData: false, extensionData: extensions != nil)
        var authData = Self.header(rpID: rpID ?? credential.rpID, flags: flagsByte, signCount: count)
        if let extensions { authData += extensions.encoded }
        let clientDataJSON = Self.clientDataJSON(
            type: clientDataType, challenge: challenge, origin: origin ?? credential.origin, crossOrigin: crossOrigin, topOrigin: topOrigin,
            tail: clientDataTail)
        let signature = credential.sign(authData + Array(SHA256.hash(data: clientDataJSON)))
        return AuthenticationResponseJSON(
            id: Base64URL.encode(credential.id), rawId: Base64URL.encode(credential.id),
            response: AuthenticatorAssertionResponseJSON(
                clientDataJSON: Base64URL.encode(clientDataJSON), authenticatorData: Base64URL.encode(authData),
                signature: Base64URL.encode(signature),
                userHandle: includeUserHandle ? Base64URL.encode(userHandle ?? credential.userHandle) : nil),
            authenticatorAttachment: "platform")
    }

    // MARK: - Parts

    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// RP id hash, flags, counter.
    static func header(rpID: String, flags: UInt8, signCount: UInt32) -> [UInt8] {
        Array(SHA256.hash(data: Array(rpID.utf8))) + [flags]
            + [UInt8(signCount >> 24 & 0xFF), UInt8(signCount >> 16 & 0xFF), UInt8(signCount >> 8 & 0xFF), UInt8(signCount & 0xFF)]
    }

    /// A fresh key pair and its public key's COSE_Key bytes, labels in CTAP2's canonical order.
    static func makeKey(_ algorithm: COSEAlgorithm) -> (SoftCredential.PrivateKey, [UInt8]) {
        switch algorithm {
        case .es256:
            let key = P256.Signing.PrivateKey()
            let point = Array(key.publicKey.rawRepresentation)
            let cose = CBORValue.map([
                (.integer(1), .integer(2)), (.integer(3), .integer(-7)), (.integer(-1), .integer(1)),
                (.integer(-2), .bytes(Array(point[0..<32]))), (.integer(-3), .bytes(Array(point[32..<64]))),
            ])
            return (.p256(key), cose.encoded)
        case .edDSA:
            let key = Curve25519.Signing.PrivateKey()
            let cose = CBORValue.map([
                (.integer(1), .integer(1)), (.integer(3), .integer(-8)), (.integer(-1), .integer(6)),
                (.integer(-2), .bytes(Array(key.publicKey.rawRepresentation))),
            ])
            return (.ed25519(key), cose.encoded)
        case .rs256:
            // Key generation only fails when the library is broken.
            let key = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
            let primitives = try! key.publicKey.getKeyPrimitives()
            let cose = CBORValue.map([
                (.integer(1), .integer(3)), (.integer(3), .integer(-257)),
                (.integer(-1), .bytes(Array(primitives.modulus))), (.integer(-2), .bytes(Array(primitives.publicExponent))),
            ])
            return (.rsa(key), cose.encoded)
        }
    }

    /// The client data JSON as Chromium writes it: type, challenge, origin, crossOrigin, then
    /// topOrigin; then `tail`, as it is.
    static func clientDataJSON(
        type: String, challenge: [UInt8], origin: String, crossOrigin: Bool?, topOrigin: String?, tail: String = ""
    ) -> [UInt8] {
        var json = "{\"type\":\(jsonString(type)),\"challenge\":\"\(Base64URL.encode(challenge))\",\"origin\":\(jsonString(origin))"
        if let crossOrigin { json += ",\"crossOrigin\":\(crossOrigin)" }
        if let topOrigin { json += ",\"topOrigin\":\(jsonString(topOrigin))" }
        return Array((json + tail + "}").utf8)
    }

    static func jsonString(_ text: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let data = try! encoder.encode(text)
        return String(decoding: data, as: UTF8.self)
    }

    /// The format and statement for `attestation`, signing `signed` when it is self attestation.
    static func statement(_ attestation: SoftAttestation, credential: SoftCredential, signed: [UInt8]) -> (String, CBORValue) {
        let algorithm = CBORValue.integer(Int64(credential.algorithm.rawValue))
        switch attestation {
        case .none:
            return ("none", .map([]))
        case .packedSelf:
            return ("packed", .map([(.text("alg"), algorithm), (.text("sig"), .bytes(credential.sign(signed)))]))
        case .packedSelfClaiming(let claimed):
            return ("packed", .map([(.text("alg"), .integer(Int64(claimed))), (.text("sig"), .bytes(credential.sign(signed)))]))
        case .packedSelfBadSignature:
            var signature = credential.sign(signed)
            signature[signature.count / 2] ^= 0x01
            return ("packed", .map([(.text("alg"), algorithm), (.text("sig"), .bytes(signature))]))
        case .packedWithCertificate:
            let certificate = CBORValue.bytes(Array("not a real certificate".utf8))
            return (
                "packed",
                .map([(.text("alg"), algorithm), (.text("sig"), .bytes(credential.sign(signed))), (.text("x5c"), .array([certificate]))])
            )
        case .custom(let format, let statement):
            return (format, statement)
        }
    }
}
