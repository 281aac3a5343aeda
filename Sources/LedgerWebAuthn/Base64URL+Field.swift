import LedgerCore

extension Base64URL {
    /// Decodes a base64url field of a response, or refuses it as malformed, naming the field only.
    static func field(_ text: String, _ name: String) throws(WebAuthnError) -> [UInt8] {
        guard let bytes = decode(text) else { throw WebAuthnError(.malformed, "\(name) is not base64url") }
        return bytes
    }

    /// The credential id of a response: `id` and `rawId` both base64url, the same bytes, 1 to 1023 of them.
    static func credentialID(id: String, rawId: String) throws(WebAuthnError) -> [UInt8] {
        let raw = try field(rawId, "rawId")
        guard try field(id, "id") == raw else { throw WebAuthnError(.credential, "id and rawId differ") }
        guard (1...AttestedCredentialData.maximumCredentialIDLength).contains(raw.count) else {
            throw WebAuthnError(.credential, "a credential id of \(raw.count) bytes (1 to 1023 allowed)")
        }
        return raw
    }
}
