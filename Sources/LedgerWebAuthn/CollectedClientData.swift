import LedgerCore

/// The client data (§5.8.1) the browser or platform signs with the authenticator data: which
/// ceremony, which challenge, from which origin.
public struct CollectedClientData: Sendable {
    /// "webauthn.create" or "webauthn.get".
    public let type: String
    /// The challenge, decoded from its base64url text.
    public let challenge: [UInt8]
    /// The caller's origin: "https://host[:port]", or "android:apk-key-hash:…" from an Android app.
    public let origin: String
    public let crossOrigin: Bool?
    /// Set when the call came from a frame of another origin than the top-level page.
    public let topOrigin: String?

    /// The longest client data accepted; a browser's is a few hundred bytes.
    public static let maximumSize = 16384

    /// A key named twice is refused: which copy a parser takes differs between parsers, and
    /// the signed bytes must mean one thing.
    private static let decoder = JSONPayloadDecoder(parseDate: { _ in nil }, refusesDuplicateKeys: true)

    /// The JSON fields read; the others (tokenBinding, extra data) are ignored as §5.8.1 requires.
    private struct Fields: Decodable {
        let type: String
        let challenge: String
        let origin: String
        let crossOrigin: Bool?
        let topOrigin: String?
    }

    /// Parses the JSON (the decoded `clientDataJSON`). The challenge must be base64url.
    public init(json bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count <= Self.maximumSize else {
            throw WebAuthnError(.malformed, "client data: longer than \(Self.maximumSize) bytes")
        }
        let fields: Fields
        do {
            fields = try Self.decoder.decode(Fields.self, from: bytes)
        } catch {
            // The decoding error can quote the document, which holds the challenge: only its kind is kept.
            throw WebAuthnError(.malformed, "client data: not a JSON object with type, challenge and origin strings")
        }
        guard let challenge = Base64URL.decode(fields.challenge) else {
            throw WebAuthnError(.malformed, "client data: the challenge is not base64url")
        }
        self.type = fields.type
        self.challenge = challenge
        self.origin = fields.origin
        self.crossOrigin = fields.crossOrigin
        self.topOrigin = fields.topOrigin
    }
}
