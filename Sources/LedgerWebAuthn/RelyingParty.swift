import Crypto
import LedgerCrypto

/// The service as a WebAuthn relying party: its RP id and the origins its pages and apps call
/// from. It verifies registrations (§7.1) and assertions (§7.2); challenges, stored keys and
/// counters are the caller's to keep.
public struct RelyingParty: Sendable {
    /// The RP id ("example.com"): the domain credentials are scoped to.
    public let id: String
    /// The allowed origins, as `serializedOrigin` writes them (an unparsable one is kept verbatim, and matches only itself).
    public let origins: [String]
    let originSet: Set<String>
    let rpIDHash: [UInt8]

    /// `origins`: web origins ("https://app.example.com", "http://localhost:8080"), compared
    /// exactly as a browser serializes them (scheme and host lower case, no default port, no
    /// path or trailing slash), and Android apps as "android:apk-key-hash:<base64url SHA-256>".
    public init(id: String, origins: [String]) {
        self.id = id
        self.origins = origins.map { Self.serializedOrigin($0) ?? $0 }
        self.originSet = Set(self.origins)
        self.rpIDHash = Array(Crypto.SHA256.hash(data: Array(id.utf8)))
    }

    /// The ceremony's common client-data checks (§7.1 steps 7-9, §7.2 steps 11-13), in order:
    /// type, challenge (constant time), origin, no cross-origin frame.
    func check(_ clientData: CollectedClientData, type: String, challenge: [UInt8]) throws(WebAuthnError) {
        guard clientData.type == type else {
            throw WebAuthnError(.type, "client data type is not \(type)")
        }
        guard ConstantTime.equals(clientData.challenge, challenge) else {
            throw WebAuthnError(.challenge, "the challenge is not the one issued")
        }
        guard originSet.contains(clientData.origin) else {
            throw WebAuthnError(.origin, "the origin is not an allowed one")
        }
        // Passkeys are used from the service's own pages and apps, never from a frame of another site.
        guard clientData.crossOrigin != true, clientData.topOrigin == nil else {
            throw WebAuthnError(.origin, "the call came from a cross-origin frame")
        }
    }

    /// The authenticator data checks both ceremonies share: RP id hash, UP, UV when required.
    func check(_ authenticatorData: AuthenticatorData, requireUserVerification: Bool) throws(WebAuthnError) {
        guard authenticatorData.rpIDHash == rpIDHash else {
            throw WebAuthnError(.rpIDHash, "the authenticator data is for another RP id")
        }
        guard authenticatorData.flags.userPresent else {
            throw WebAuthnError(.userPresence, "the user was not present (UP clear)")
        }
        guard authenticatorData.flags.userVerified || !requireUserVerification else {
            throw WebAuthnError(.userVerification, "the user was not verified (UV clear)")
        }
    }

    /// What both ceremonies sign: authenticator data followed by SHA-256 of the client data JSON.
    static func signedData(authenticatorData: [UInt8], clientDataJSON: [UInt8]) -> [UInt8] {
        authenticatorData + Array(Crypto.SHA256.hash(data: clientDataJSON))
    }
}
