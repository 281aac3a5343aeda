/// The attestation object of a registration (§6.5): `{fmt, attStmt, authData}` in CBOR.
public struct AttestationObject: Sendable {
    /// The attestation statement format ("none", "packed", …).
    public let format: String
    /// The statement, a CBOR map whose form the format defines.
    public let statement: CBORValue
    public let authenticatorData: AuthenticatorData

    /// Parses the CBOR and the authenticator data in it; other top-level keys are ignored.
    public init(bytes: [UInt8]) throws(WebAuthnError) {
        let object = try CBORDecoder().decode(bytes)
        guard object.mapEntries != nil else { throw WebAuthnError(.malformed, "attestation object: not a map") }
        guard let format = object["fmt"]?.textValue else { throw WebAuthnError(.malformed, "attestation object: no fmt text") }
        guard let statement = object["attStmt"], statement.mapEntries != nil else {
            throw WebAuthnError(.malformed, "attestation object: no attStmt map")
        }
        guard let authData = object["authData"]?.bytesValue else {
            throw WebAuthnError(.malformed, "attestation object: no authData bytes")
        }
        self.format = format
        self.statement = statement
        self.authenticatorData = try AuthenticatorData(bytes: authData)
    }
}
