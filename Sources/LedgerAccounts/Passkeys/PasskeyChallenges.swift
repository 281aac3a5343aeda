import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// The challenges of passkey ceremonies, stored nowhere: each carries its purpose, its expiry,
/// the session it is bound to (registration and re-auth) and, for a registration, the user
/// handle its options named, authenticated with HMAC-SHA256 under a key derived from the master
/// key. A flood of options requests writes nothing; an answer spends its challenge
/// (`SpentChallenges`) before anything is checked, so each is answered once, accepted or not.
///
/// Layout: version (1), purpose (1), expiry (Unix seconds, 8, big-endian), session (16, zero
/// when unbound), handle length (1) and handle, 16 random bytes, then the 32-byte tag.
public struct PasskeyChallenges: Sendable {
    public enum Purpose: UInt8, Sendable {
        case registration = 1
        case signIn = 2
        case reauth = 3
    }

    /// An authentic challenge that has not expired.
    public struct Opened: Sendable, Equatable {
        public let purpose: Purpose
        public let expiresAt: Date
        public let sessionID: UUID?
        public let userHandle: [UInt8]?
    }

    let key: [UInt8]
    /// 5 minutes (docs/passkeys.md).
    public let lifetime: TimeInterval

    static let version: UInt8 = 1
    static let tagLength = 32
    static let randomLength = 16

    public init(key: [UInt8], lifetime: TimeInterval = 300) {
        self.key = key
        self.lifetime = lifetime
    }

    public init(masterKey: MasterKey) {
        self.init(key: masterKey.derivedKey(label: KeyLabel.passkeyChallenge))
    }

    /// A new challenge for `purpose`, good for `lifetime` from `now`.
    public func issue(_ purpose: Purpose, sessionID: UUID? = nil, userHandle: [UInt8]? = nil, now: Date) throws -> [UInt8] {
        precondition((userHandle?.count ?? 0) <= 64, "a WebAuthn user handle is at most 64 bytes")
        var bytes: [UInt8] = [Self.version, purpose.rawValue]
        let expiry = UInt64(now.addingTimeInterval(lifetime).timeIntervalSince1970.rounded(.up))
        withUnsafeBytes(of: expiry.bigEndian) { bytes.append(contentsOf: $0) }
        bytes += sessionID?.bytes ?? [UInt8](repeating: 0, count: 16)
        bytes.append(UInt8(userHandle?.count ?? 0))
        bytes += userHandle ?? []
        bytes += try SecureRandom.bytes(Self.randomLength)
        return bytes + HMACSHA256.authenticate(key: key, message: bytes)
    }

    /// The challenge's contents when it is one of ours (the tag verifies, in constant time),
    /// for `purpose`, bound to `sessionID` (nil for sign-in) and not expired; nil otherwise.
    public func open(_ challenge: [UInt8], purpose: Purpose, sessionID: UUID?, now: Date) -> Opened? {
        let fixed = 2 + 8 + 16 + 1
        guard challenge.count >= fixed + Self.randomLength + Self.tagLength, challenge.count <= 256 else { return nil }
        let body = Array(challenge.dropLast(Self.tagLength))
        guard ConstantTime.equals(HMACSHA256.authenticate(key: key, message: body), Array(challenge.suffix(Self.tagLength))) else {
            return nil
        }
        let handleLength = Int(body[fixed - 1])
        guard body[0] == Self.version, body[1] == purpose.rawValue, body.count == fixed + handleLength + Self.randomLength else {
            return nil
        }
        let expiry = body[2..<10].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let expiresAt = Date(timeIntervalSince1970: TimeInterval(expiry))
        guard now < expiresAt else { return nil }
        let session = Array(body[10..<26])
        let boundTo = session.allSatisfy { $0 == 0 } ? nil : UUID(bytes: session)
        guard boundTo == sessionID else { return nil }
        let handle = handleLength == 0 ? nil : Array(body[fixed..<(fixed + handleLength)])
        return Opened(purpose: purpose, expiresAt: expiresAt, sessionID: boundTo, userHandle: handle)
    }
}

/// Where answered passkey challenges are remembered until they expire, shared by every
/// instance, so a challenge is answered once wherever its answers arrive.
public protocol SpentChallenges: Sendable {
    /// Marks the challenge (by hash) spent until `expiresAt`; false when it already was.
    func spend(_ challengeHash: [UInt8], expiresAt: Date) async throws -> Bool
}
