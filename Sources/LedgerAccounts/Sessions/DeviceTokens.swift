import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// The opaque token naming one device of one account (`device_token` in every session answer,
/// `X-Device-Token` on later sign-ins): `dv_` + base64url(the device's id, and the first 16
/// bytes of an HMAC-SHA256 binding it to the account under a key derived from the master key).
/// Nothing is stored but the id, so every session of the device answers the same token, and a
/// token made for another account (or made up) names no device here: the sign-in is a new
/// device, whatever labels the client sends.
public struct DeviceTokens: Sendable {
    let key: [UInt8]

    static let prefix = "dv_"

    public init(key: [UInt8]) {
        self.key = key
    }

    /// The development setup's: a fixed key (production derives it from the master key).
    public static let development = DeviceTokens(key: Array("account-ledger/development-device-token-key".utf8))

    /// The token of `deviceID` on `accountID`'s account.
    public func token(for deviceID: UUID, of accountID: UUID) -> String {
        Self.prefix + Base64URL.encode(deviceID.bytes + mac(deviceID, accountID))
    }

    /// The device a token names on `accountID`'s account; nil for none, a malformed one, or
    /// one made for another account.
    public func deviceID(in token: String?, of accountID: UUID) -> UUID? {
        guard let token, token.hasPrefix(Self.prefix), token.utf8.count <= 64,
            let bytes = Base64URL.decode(String(token.dropFirst(Self.prefix.count))), bytes.count == 32,
            let deviceID = UUID(bytes: Array(bytes[0..<16])), ConstantTime.equals(Array(bytes[16...]), mac(deviceID, accountID))
        else { return nil }
        return deviceID
    }

    private func mac(_ deviceID: UUID, _ accountID: UUID) -> [UInt8] {
        Array(HMACSHA256.authenticate(key: key, message: accountID.bytes + deviceID.bytes).prefix(16))
    }
}
