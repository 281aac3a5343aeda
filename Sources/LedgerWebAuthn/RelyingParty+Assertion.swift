import LedgerCore

extension RelyingParty {
    /// The authentication ceremony's checks (§7.2), cheap ones first: `id` and `rawId` agree; type
    /// "public-key"; client data type "webauthn.get", the issued `challenge`, an allowed origin, no
    /// cross-origin frame; RP id hash, UP, UV when required; the signature over authenticator data
    /// and SHA-256(clientDataJSON) with `publicKey` (the stored COSE bytes); then the counter rule:
    /// when the stored or the new counter is non-zero, the new one must be greater (`.counter`: the
    /// authenticator may be cloned; the caller records it). Both zero is a synced passkey's normal.
    ///
    /// The caller looks the credential up by `credentialID()` first, and checks the user handle
    /// belongs to the credential's account.
    public func verifyAssertion(
        _ response: AuthenticationResponseJSON, challenge: [UInt8], publicKey: [UInt8], storedSignCount: UInt32,
        requireUserVerification: Bool = true
    ) throws(WebAuthnError) -> VerifiedAssertion {
        let credentialID = try response.credentialID()
        guard response.type == "public-key" else { throw WebAuthnError(.type, "the credential type is not public-key") }
        let userHandle = try response.userHandleBytes()
        let clientDataJSON = try Base64URL.field(response.response.clientDataJSON, "clientDataJSON")
        try check(CollectedClientData(json: clientDataJSON), type: "webauthn.get", challenge: challenge)

        let authenticatorData = try AuthenticatorData(bytes: Base64URL.field(response.response.authenticatorData, "authenticatorData"))
        try check(authenticatorData, requireUserVerification: requireUserVerification)
        let signature = try Base64URL.field(response.response.signature, "signature")

        let key: COSEKey
        do {
            key = try COSEKey(cbor: publicKey)
        } catch {
            throw WebAuthnError(.credential, "the stored public key does not parse: \(error.message)")
        }
        let signed = Self.signedData(authenticatorData: authenticatorData.raw, clientDataJSON: clientDataJSON)
        guard key.verify(signature: signature, over: signed) else {
            throw WebAuthnError(.signature, "the signature does not verify with the credential's key")
        }
        // After the signature: a counter only means something once the authenticator vouched for it.
        let signCount = authenticatorData.signCount
        if storedSignCount != 0 || signCount != 0 {
            guard signCount > storedSignCount else {
                throw WebAuthnError(.counter, "the signature counter went from \(storedSignCount) to \(signCount)")
            }
        }
        return VerifiedAssertion(
            credentialID: credentialID, signCount: signCount, userVerified: authenticatorData.flags.userVerified,
            backupEligible: authenticatorData.flags.backupEligible, backedUp: authenticatorData.flags.backedUp, userHandle: userHandle)
    }
}
