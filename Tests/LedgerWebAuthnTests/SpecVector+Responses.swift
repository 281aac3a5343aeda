import LedgerCore
import LedgerWebAuthn

extension SpecVector {
    /// The bytes of a hex literal, ignoring the line breaks and indentation of wrapped ones.
    static func bytes(_ hex: String) -> [UInt8] {
        Hex.decode(String(hex.filter { !$0.isWhitespace }))!
    }

    /// The registration as a browser would send it.
    var registration: RegistrationResponseJSON {
        let id = Base64URL.encode(Self.bytes(credentialID))
        return RegistrationResponseJSON(
            id: id, rawId: id,
            response: AuthenticatorAttestationResponseJSON(
                clientDataJSON: Base64URL.encode(Self.bytes(clientDataJSON)),
                attestationObject: Base64URL.encode(Self.bytes(attestationObject))))
    }

    /// The authentication as a browser would send it (the vectors carry no user handle).
    var assertion: AuthenticationResponseJSON {
        let id = Base64URL.encode(Self.bytes(credentialID))
        return AuthenticationResponseJSON(
            id: id, rawId: id,
            response: AuthenticatorAssertionResponseJSON(
                clientDataJSON: Base64URL.encode(Self.bytes(assertionClientDataJSON)),
                authenticatorData: Base64URL.encode(Self.bytes(authenticatorData)), signature: Base64URL.encode(Self.bytes(signature))))
    }

    /// The credential public key of the registration, read from its authenticator data.
    var publicKey: [UInt8] {
        get throws {
            try AttestationObject(bytes: Self.bytes(attestationObject)).authenticatorData.attestedCredential!.publicKey
        }
    }

    static let relyingParty = RelyingParty(id: rpID, origins: [origin])
}
