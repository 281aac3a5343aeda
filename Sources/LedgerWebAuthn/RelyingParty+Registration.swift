import LedgerCore

extension RelyingParty {
    /// The registration ceremony's checks (§7.1), cheap ones first and signatures last: `id` and
    /// `rawId` agree; type "public-key"; client data type "webauthn.create", the issued
    /// `challenge`, an allowed origin, no cross-origin frame; the attestation object's RP id hash,
    /// UP, UV when required; a credential whose id is `rawId` and whose key is ES256, EdDSA or RS256;
    /// attestation "none" (an empty statement) or "packed" self attestation (the statement's `alg`
    /// is the key's and its `sig` verifies with it). The service asks for attestation "none", so a
    /// certificate chain (`x5c`) or any other format is refused.
    public func verifyRegistration(
        _ response: RegistrationResponseJSON, challenge: [UInt8], requireUserVerification: Bool = true
    ) throws(WebAuthnError) -> VerifiedRegistration {
        let credentialID = try response.credentialID()
        guard response.type == "public-key" else { throw WebAuthnError(.type, "the credential type is not public-key") }
        let clientDataJSON = try Base64URL.field(response.response.clientDataJSON, "clientDataJSON")
        try check(CollectedClientData(json: clientDataJSON), type: "webauthn.create", challenge: challenge)

        let attestation = try AttestationObject(bytes: Base64URL.field(response.response.attestationObject, "attestationObject"))
        let authenticatorData = attestation.authenticatorData
        try check(authenticatorData, requireUserVerification: requireUserVerification)
        guard let credential = authenticatorData.attestedCredential else {
            throw WebAuthnError(.malformed, "the authenticator data holds no credential (AT clear)")
        }
        guard credential.credentialID == credentialID else {
            throw WebAuthnError(.credential, "the authenticator data's credential id is not rawId")
        }
        let key = try COSEKey(cbor: credential.publicKey)
        try checkStatement(attestation, key: key, clientDataJSON: clientDataJSON)

        return VerifiedRegistration(
            credentialID: credentialID, publicKey: credential.publicKey, algorithm: key.algorithm,
            signCount: authenticatorData.signCount, userVerified: authenticatorData.flags.userVerified,
            backupEligible: authenticatorData.flags.backupEligible, backedUp: authenticatorData.flags.backedUp,
            aaguid: credential.aaguid, attestationFormat: attestation.format, transports: response.response.transports ?? [])
    }

    /// §7.1 steps 21-24 for the two formats accepted: "none" and "packed" self attestation (§8.2).
    private func checkStatement(_ attestation: AttestationObject, key: COSEKey, clientDataJSON: [UInt8]) throws(WebAuthnError) {
        let entries = attestation.statement.mapEntries ?? []
        switch attestation.format {
        case "none":
            guard entries.isEmpty else { throw WebAuthnError(.attestation, "attestation none with a non-empty statement") }
        case "packed":
            guard attestation.statement["x5c"] == nil else {
                throw WebAuthnError(.attestation, "packed attestation with a certificate chain (x5c): only self attestation is accepted")
            }
            // Self attestation is exactly {alg, sig}; ecdaaKeyId or anything else is another kind.
            guard entries.count == 2, let alg = attestation.statement["alg"]?.integerValue,
                let signature = attestation.statement["sig"]?.bytesValue
            else {
                throw WebAuthnError(.attestation, "packed self attestation is not {alg, sig}")
            }
            guard alg == Int64(key.algorithm.rawValue) else {
                throw WebAuthnError(.attestation, "packed self attestation's alg is not the credential key's")
            }
            let signed = Self.signedData(authenticatorData: attestation.authenticatorData.raw, clientDataJSON: clientDataJSON)
            guard key.verify(signature: signature, over: signed) else {
                throw WebAuthnError(.attestation, "packed self attestation's signature does not verify")
            }
        default:
            throw WebAuthnError(.attestation, "attestation format \(Self.printable(attestation.format)) is not accepted")
        }
    }

    /// A format name fit for a log line: short and plain, else a placeholder.
    static func printable(_ name: String) -> String {
        let plain =
            name.count <= 32
            && name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || "-_0123456789".unicodeScalars.contains($0)) }
        return plain ? "\"\(name)\"" : "(unprintable)"
    }
}
