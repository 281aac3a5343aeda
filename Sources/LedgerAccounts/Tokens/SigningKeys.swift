import Foundation
import JWTKit
import LedgerCore
import LedgerCrypto

/// The service's access-token signing keys: made here (P-256), sealed, rotated
/// (docs/api.md "Access tokens that other services verify").
public struct SigningKeys: Sendable {
    let store: any SigningKeyStore
    let seal: SigningKeySeal
    let clock: any LedgerClock
    /// How long an access token lives (a retiring key stays published that long).
    public let tokenLifetime: TimeInterval
    /// How long a new key is published before it signs (`LEDGER_SIGNING_KEY_ACTIVATION_SECONDS`).
    public let activationDelay: TimeInterval

    public init(
        store: any SigningKeyStore, masterKey: MasterKey, clock: any LedgerClock, tokenLifetime: TimeInterval,
        activationDelay: TimeInterval
    ) {
        self.store = store
        self.seal = SigningKeySeal(masterKey: masterKey)
        self.clock = clock
        self.tokenLifetime = tokenLifetime
        self.activationDelay = activationDelay
    }

    /// The keys and which does what.
    public func schedule() async throws -> SigningKeySchedule {
        SigningKeySchedule(keys: try await store.all(), tokenLifetime: tokenLifetime)
    }

    /// Makes a new key: published at once, signing after `activationDelay` (at once when it is
    /// the first). Erases the private halves of keys retired meanwhile. Refused under another
    /// master key than the keys' (no instance could open what it made).
    @discardableResult
    public func rotate() async throws -> SigningKeyRecord {
        // Whole seconds: the activation is part of what the seal binds, and goes through the database.
        let now = Date(timeIntervalSince1970: clock.now().timeIntervalSince1970.rounded(.down))
        let schedule = try await schedule()
        if let sealedElsewhere = schedule.keys.first(where: { $0.sealedKey != nil && $0.masterKeyID != seal.masterKeyID }) {
            throw CryptoError(
                .wrongMasterKey,
                "signing key \(sealedElsewhere.kid) was sealed by master key \(sealedElsewhere.masterKeyID), but the configured master key is \(seal.masterKeyID)"
            )
        }
        let privateKey = ES256PrivateKey()
        guard let point = privateKey.publicKey.parameters else {
            throw CryptoError(.invalidKey, "the new signing key has no public point")
        }
        let kid = Base64URL.encode(try SecureRandom.bytes(12))
        let activatesAt = schedule.activation(ofKeyMadeAt: now, activationDelay: activationDelay.rounded(.up))
        let record = SigningKeyRecord(
            kid: kid, sealedKey: try seal.seal(privateKey, kid: kid, x: point.x, y: point.y, activatesAt: activatesAt),
            masterKeyID: seal.masterKeyID, x: point.x, y: point.y, createdAt: now, activatesAt: activatesAt)
        try await store.insert(record)
        try await eraseRetired(schedule, at: now)
        return record
    }

    /// A key to sign with: made now when there is none (the first start with JWT access tokens);
    /// throws when the key that signs cannot be opened (another master key, a row not made here).
    public func ensureSigningKey() async throws {
        guard let signing = try await schedule().signing(at: clock.now()) else {
            try await rotate()
            return
        }
        _ = try privateKey(signing)
    }

    /// Erases the private halves of keys `schedule` says are retired at `now`.
    public func eraseRetired(_ schedule: SigningKeySchedule, at now: Date) async throws {
        let retired = schedule.keys.filter { $0.sealedKey != nil && schedule.state(of: $0, at: now) == .retired }.map(\.kid)
        if !retired.isEmpty { try await store.erasePrivateKeys(retired) }
    }

    /// The private half of `record`.
    public func privateKey(_ record: SigningKeyRecord) throws -> ES256PrivateKey {
        try seal.open(record)
    }
}
