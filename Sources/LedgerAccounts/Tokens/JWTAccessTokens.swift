import Foundation
import JWTKit
import LedgerCore
import LedgerCrypto
import Logging
import Synchronization

/// JWT access tokens: minted for a session, checked when presented. The key set is read from
/// the store and read again every `reloadInterval` (so every instance follows a rotation
/// within a minute), and a token whose signature was checked once is remembered by its
/// SHA-256 until it expires: a request then costs one hash and a lookup, as an opaque token does.
///
/// A token checked here only names its session (`jti`, the hash the session keeps): the caller
/// still finds that session live, so a sign-out or a refresh ends the token at once.
public final class JWTAccessTokens: Sendable {
    /// How often the key set is read again.
    public static let reloadInterval: TimeInterval = 30
    /// A `kid` this instance does not know makes it read the key set again, at most this often.
    static let unknownKeyReloadInterval: TimeInterval = 5
    /// Tokens remembered as checked, at most.
    static let rememberedTokens = 100_000
    /// How far in the future a token's `iat` may lie (another instance's clock).
    static let allowedClockSkew: TimeInterval = 60

    let keys: SigningKeys
    public let settings: AccessTokenSettings
    let clock: any LedgerClock

    /// The key set as last read: only keys whose seal opens with this master key and matches
    /// their public point are trusted (a row written into the table by hand is not).
    private struct Loaded: Sendable {
        var readAt: Date
        let collection: JWTKeyCollection
        /// The kids the collection verifies with, and the keys published.
        let verifying: Set<String>
        let published: [SigningKeyRecord]
        /// The kid of the key that signs, and when that changes (a next key's activation).
        let signing: String?
        let signingUntil: Date?
    }

    private struct State: Sendable {
        var loaded: Loaded?
        /// The read under way, which every caller meanwhile awaits instead of starting its own.
        var reading: Task<Loaded, any Error>?
        /// SHA-256 of a checked token → the session's access hash and the token's expiry.
        var checked: [[UInt8]: (accessHash: [UInt8], expiresAt: Date)] = [:]
    }

    private let state = Mutex(State())

    /// Logs a key set that could not be read, or a key that cannot be trusted.
    let logger = Logger(label: "ledger.access-tokens")

    public init(keys: SigningKeys, settings: AccessTokenSettings, clock: any LedgerClock) {
        self.keys = keys
        self.settings = settings
        self.clock = clock
    }

    /// The key set, read again when it is older than `reloadInterval` or when the signing key
    /// is due to change (`force`: whatever its age). One read at a time; when a read fails, the
    /// last good set goes on serving and the read is tried again `unknownKeyReloadInterval` later.
    private func loaded(force: Bool = false) async throws -> Loaded {
        let now = clock.now()
        enum Next {
            case ready(Loaded)
            case wait(Task<Loaded, any Error>)
        }
        let next: Next = state.withLock { state in
            if let reading = state.reading { return .wait(reading) }
            if !force, let loaded = state.loaded, now.timeIntervalSince(loaded.readAt) < Self.reloadInterval,
                loaded.signingUntil.map({ now < $0 }) ?? true
            {
                return .ready(loaded)
            }
            let reading = Task { try await self.read(at: now) }
            state.reading = reading
            return .wait(reading)
        }
        let task: Task<Loaded, any Error>
        switch next {
        case .ready(let loaded): return loaded
        case .wait(let reading): task = reading
        }
        do {
            let loaded = try await task.value
            state.withLock { state in
                if state.reading == task {
                    state.loaded = loaded
                    state.reading = nil
                }
            }
            return loaded
        } catch {
            let previous: Loaded? = state.withLock { state in
                if state.reading == task { state.reading = nil }
                guard var kept = state.loaded else { return nil }
                // Tried again a little later, not by every request meanwhile.
                kept.readAt = now.addingTimeInterval(Self.unknownKeyReloadInterval - Self.reloadInterval)
                state.loaded = kept
                return kept
            }
            logger.error("the signing keys could not be read", metadata: ["error": "\(error)"])
            guard let previous else { throw error }
            return previous
        }
    }

    /// Reads the keys and opens the ones to trust.
    private func read(at now: Date) async throws -> Loaded {
        let schedule = try await keys.schedule()
        let collection = JWTKeyCollection()
        var trusted: [String: ES256PrivateKey] = [:]
        let published = schedule.published(at: now)
        for record in published {
            do {
                trusted[record.kid] = try keys.privateKey(record)
            } catch {
                logger.error("a signing key cannot be trusted", metadata: ["kid": "\(record.kid)", "error": "\(error)"])
            }
        }
        let verifying = schedule.verifying(at: now).filter { trusted[$0.kid] != nil }
        for record in verifying {
            await collection.add(ecdsa: trusted[record.kid]!.publicKey, kid: JWKIdentifier(string: record.kid))
        }
        // The newest active key that opens signs (a key that will not open is passed over, not a 500).
        let signing = schedule.keys.last { $0.activatesAt <= now && trusted[$0.kid] != nil }
        if let signing { await collection.add(ecdsa: trusted[signing.kid]!, kid: JWKIdentifier(string: signing.kid)) }
        // A retired key's private half has no use left: gone now, not at the next rotation.
        try? await keys.eraseRetired(schedule, at: now)
        return Loaded(
            readAt: now, collection: collection, verifying: Set(verifying.map(\.kid)),
            published: published.filter { trusted[$0.kid] != nil }, signing: signing?.kid,
            signingUntil: schedule.keys.first { $0.activatesAt > now }?.activatesAt)
    }

    /// Whether a key signs: read (and made, when there is none) before a command whose answer
    /// needs a JWT, so a failure stops it before it commits (a refresh token spent for an
    /// answer the client never gets would end the session at its retry).
    public func prepare() async throws {
        guard settings.format == .jwt else { return }
        _ = try await signingSet()
    }

    /// The key set and the kid that signs: a key made first when none signs yet.
    private func signingSet() async throws -> (loaded: Loaded, kid: String) {
        let current = try await loaded()
        if let kid = current.signing { return (current, kid) }
        try await keys.ensureSigningKey()
        let loaded = try await loaded(force: true)
        guard let kid = loaded.signing else { throw CryptoError(.invalidKey, "no signing key that opens is active") }
        return (loaded, kid)
    }

    /// A token for `claims`, signed with the current key; `typ` is `at+jwt`.
    public func sign(_ claims: AccessTokenClaims) async throws -> String {
        let (loaded, kid) = try await signingSet()
        var header = JWTHeader()
        header.alg = "ES256"
        header.typ = "at+jwt"
        return try await loaded.collection.sign(claims, kid: JWKIdentifier(string: kid), header: header)
    }

    /// The claims of a token minted for a session at `issuedAt`, ending at `expiresAt`.
    public func claims(
        accountID: UUID, sessionID: UUID, accessHash: [UInt8], authTime: Date, methods: [String], emailVerified: Bool,
        issuedAt: Date, expiresAt: Date
    ) -> AccessTokenClaims {
        AccessTokenClaims(
            issuer: settings.issuer, subject: accountID.lowercased, audience: settings.audience, clientID: settings.clientID,
            issuedAt: Int(issuedAt.timeIntervalSince1970), expiresAt: Int(expiresAt.timeIntervalSince1970),
            tokenID: Base64URL.encode(accessHash), sessionID: sessionID.lowercased, authTime: Int(authTime.timeIntervalSince1970),
            methods: methods, emailVerified: emailVerified)
    }

    /// Whether `token` has the shape of a JWT (three base64url parts): anything else is an opaque token.
    public static func looksLikeJWT(_ token: String) -> Bool {
        token.hasPrefix("eyJ") && token.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2
    }

    /// The access hash a presented JWT names, when its header, signature, issuer, audience and
    /// times are right; nil otherwise. The session it names must still be found live.
    public func accessHash(of token: String) async -> [UInt8]? {
        let now = clock.now()
        let digest = SHA256.hash(Array(token.utf8))
        if let known = state.withLock({ $0.checked[digest] }) {
            return known.expiresAt > now ? known.accessHash : nil
        }
        guard let kid = Self.acceptableKeyID(token) else { return nil }
        do {
            var loaded = try await loaded()
            if !loaded.verifying.contains(kid), now.timeIntervalSince(loaded.readAt) >= Self.unknownKeyReloadInterval {
                loaded = try await self.loaded(force: true)
            }
            guard loaded.verifying.contains(kid) else { return nil }
            let claims = try await loaded.collection.verify(token, as: AccessTokenClaims.self)
            let expiresAt = Date(timeIntervalSince1970: TimeInterval(claims.expiresAt))
            guard claims.issuer == settings.issuer, claims.audience == settings.audience, expiresAt > now,
                Date(timeIntervalSince1970: TimeInterval(claims.issuedAt)) <= now.addingTimeInterval(Self.allowedClockSkew),
                let accessHash = Base64URL.decode(claims.tokenID), accessHash.count == SHA256.byteCount
            else { return nil }
            remember(digest, accessHash: accessHash, expiresAt: expiresAt, now: now)
            return accessHash
        } catch {
            return nil
        }
    }

    private func remember(_ digest: [UInt8], accessHash: [UInt8], expiresAt: Date, now: Date) {
        state.withLock { state in
            if state.checked.count >= Self.rememberedTokens {
                state.checked = state.checked.filter { $0.value.expiresAt > now }
                // Still half full of live tokens: start over rather than sweep again at the next
                // insert (they are checked again, once each).
                if state.checked.count >= Self.rememberedTokens / 2 { state.checked = [:] }
            }
            state.checked[digest] = (accessHash, expiresAt)
        }
    }

    /// The `kid` of a token whose header says ES256 and `at+jwt`; nil for any other header
    /// (`none`, `HS256`, a bare JWT, an ID token), before any key is tried.
    static func acceptableKeyID(_ token: String) -> String? {
        guard let end = token.firstIndex(of: "."), let bytes = Base64URL.decode(String(token[..<end])),
            let header = try? JSONDecoder().decode(Header.self, from: Data(bytes)),
            header.alg == "ES256", header.typ?.lowercased() == "at+jwt" || header.typ?.lowercased() == "application/at+jwt"
        else { return nil }
        return header.kid
    }

    private struct Header: Decodable {
        let alg: String
        let typ: String?
        let kid: String
    }

    /// The key set `/.well-known/jwks.json` publishes: next, current and retiring keys.
    public func keySet() async throws -> [[String: String]] {
        try await loaded().published.map(\.jwk)
    }
}
