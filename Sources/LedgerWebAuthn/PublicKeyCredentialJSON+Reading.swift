import LedgerCore

/// Reads what a response names before anything is verified: the credential to look the stored
/// key up by, the challenge it answers, and (assertions) the user it names.
extension PublicKeyCredentialJSON {
    /// The credential id (`rawId`, which `id` must equal).
    public func credentialID() throws(WebAuthnError) -> [UInt8] {
        try Base64URL.credentialID(id: id, rawId: rawId)
    }

    /// The client data, parsed but not verified: to find which challenge the answer is to.
    public func clientData() throws(WebAuthnError) -> CollectedClientData {
        try CollectedClientData(json: Base64URL.field(response.clientDataJSON, "clientDataJSON"))
    }
}

extension PublicKeyCredentialJSON where Response == AuthenticatorAssertionResponseJSON {
    /// The longest user handle WebAuthn allows.
    public static var maximumUserHandleLength: Int { 64 }

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
}
