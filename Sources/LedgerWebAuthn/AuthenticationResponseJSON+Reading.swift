import LedgerCore

/// Reads the credential id and user handle of an assertion before the stored key is looked up (no verification).
extension AuthenticationResponseJSON {
    /// The longest user handle WebAuthn allows.
    public static let maximumUserHandleLength = 64

    /// The credential id (`rawId`, which `id` must equal), to look the stored key up by.
    public func credentialID() throws(WebAuthnError) -> [UInt8] {
        try Base64URL.credentialID(id: id, rawId: rawId)
    }

    /// The user handle, when the authenticator returned one (a discoverable credential does);
    /// nil when absent or empty.
    public func userHandleBytes() throws(WebAuthnError) -> [UInt8]? {
        guard let text = response.userHandle, !text.isEmpty else { return nil }
        let handle = try Base64URL.field(text, "userHandle")
        guard handle.count <= Self.maximumUserHandleLength else {
            throw WebAuthnError(.malformed, "a user handle of \(handle.count) bytes (64 at most)")
        }
        return handle
    }

    /// The client data, parsed but not verified: to find which challenge the answer is to.
    public func clientData() throws(WebAuthnError) -> CollectedClientData {
        try CollectedClientData(json: Base64URL.field(response.clientDataJSON, "clientDataJSON"))
    }
}
