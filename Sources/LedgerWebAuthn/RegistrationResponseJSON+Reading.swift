import LedgerCore

extension RegistrationResponseJSON {
    /// The credential id (`rawId`, which `id` must equal), without verification.
    public func credentialID() throws(WebAuthnError) -> [UInt8] {
        try Base64URL.credentialID(id: id, rawId: rawId)
    }

    /// The client data, parsed but not verified: for logs, or to find the challenge to check against.
    public func clientData() throws(WebAuthnError) -> CollectedClientData {
        try CollectedClientData(json: Base64URL.field(response.clientDataJSON, "clientDataJSON"))
    }
}
