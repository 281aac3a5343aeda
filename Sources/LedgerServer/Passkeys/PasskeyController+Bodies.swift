import Foundation
import LedgerAccounts
import LedgerCore
import LedgerIdentity
import LedgerWebAuthn

/// `{credential, name?}`: the browser's `RegistrationResponseJSON` and an optional name.
struct PasskeyRegistrationRequest: Decodable {
    let credential: RegistrationResponseJSON
    let name: String?
}

/// `{credential}`: the browser's `AuthenticationResponseJSON`.
struct PasskeyAssertionRequest: Decodable {
    let credential: AuthenticationResponseJSON
}

/// `{name}`.
struct PasskeyRenameRequest: Decodable {
    let name: String
}

/// A passkey as the API shows it: `{id, name, created_at}` when registered, with
/// `last_used_at` and `backed_up` in the list. Never its key or credential id.
struct PasskeyBody: JSONObjectBody {
    let passkey: AccountState.Passkey
    let listed: Bool

    var fields: [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "id": .string(passkey.id.lowercased), "name": .string(passkey.name), "created_at": JSONValue(timestamp: passkey.createdAt),
        ]
        if listed {
            fields["last_used_at"] = JSONValue(timestamp: passkey.lastUsedAt)
            fields["backed_up"] = .bool(passkey.backedUp)
        }
        return fields
    }
}

/// PublicKeyCredentialCreationOptionsJSON (WebAuthn L3 §5.8.2 / `parseCreationOptionsFromJSON`).
struct PasskeyCreationOptionsBody: JSONObjectBody {
    let options: PasskeyService.RegistrationOptions
    /// The relying party's id and the name authenticators show (the apps', or the console's).
    let relyingPartyID: String
    let relyingPartyName: String

    var fields: [String: JSONValue] {
        [
            "rp": .object(["id": .string(relyingPartyID), "name": .string(relyingPartyName)]),
            "user": .object([
                "id": .string(Base64URL.encode(options.userHandle)), "name": .string(options.userName),
                "displayName": .string(options.userDisplayName),
            ]),
            "challenge": .string(Base64URL.encode(options.challenge)),
            "pubKeyCredParams": .array(
                PasskeyService.algorithms.map { .object(["type": .string("public-key"), "alg": .int(Int64($0.rawValue))]) }),
            "timeout": .int(Int64(options.timeout)),
            "excludeCredentials": .array(options.excludeCredentials.map(Self.descriptor)),
            "authenticatorSelection": .object([
                "residentKey": .string("required"), "requireResidentKey": .bool(true), "userVerification": .string("required"),
            ]),
            "attestation": .string("none"),
        ]
    }

    static func descriptor(_ credential: PasskeyService.CredentialDescriptor) -> JSONValue {
        var fields: [String: JSONValue] = ["type": .string("public-key"), "id": .string(credential.id)]
        if !credential.transports.isEmpty { fields["transports"] = .array(credential.transports.map { .string($0) }) }
        return .object(fields)
    }
}

/// PublicKeyCredentialRequestOptionsJSON (`parseRequestOptionsFromJSON`).
struct PasskeyRequestOptionsBody: JSONObjectBody {
    let options: PasskeyService.RequestOptions
    let relyingPartyID: String

    var fields: [String: JSONValue] {
        [
            "challenge": .string(Base64URL.encode(options.challenge)), "rpId": .string(relyingPartyID),
            "userVerification": .string("required"), "timeout": .int(Int64(options.timeout)),
            "allowCredentials": .array(options.allowCredentials.map(PasskeyCreationOptionsBody.descriptor)),
        ]
    }
}
