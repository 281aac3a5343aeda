import Foundation
import LedgerCore
import LedgerIdentity
import Testing

@Suite("Account state snapshot encoding")
struct AccountStateCodecTests {
    static func richState() -> AccountState {
        let t0 = Date(timeIntervalSinceReferenceDate: 817_000_000.123_456_7)
        let session = UUID()
        var state = AccountState(accountID: UUID())
        let events: [AccountEvent] = [
            .imported(.init(source: "firebase", externalID: "uid-1", createdAt: t0)),
            .registered(.init(email: "Ana@Example.com", displayName: "Ana ő", method: "email")),
            .passwordSet(.init(passwordHash: "$scrypt$ln=4,r=8,p=1$c2FsdA$aGFzaA", reason: .signup)),
            .handleClaimed(.init(handle: "ana_1", temporary: false)),
            .phoneLinked(.init(phone: "+995511200300", region: "GE", requestID: nil)),
            .providerLinked(.init(provider: .apple, subject: "apple-sub", email: nil, emailVerified: false)),
            .providerTokensStored(.init(provider: .apple, subject: "apple-sub", clientID: "fit.321.ios", refreshToken: "r.apple")),
            .sessionStarted(
                .init(
                    sessionID: session, method: "password", device: nil, accessTokenHash: "aa", refreshTokenHash: "bb",
                    accessExpiresAt: t0.addingTimeInterval(900), refreshExpiresAt: t0.addingTimeInterval(86400),
                    secondFactor: "totp")),
            .sessionRefreshed(
                .init(
                    sessionID: session, accessTokenHash: "cc", refreshTokenHash: "dd",
                    accessExpiresAt: t0.addingTimeInterval(1800), refreshExpiresAt: t0.addingTimeInterval(90000))),
            .emailVerificationSent(.init(email: "Ana@Example.com", linkID: UUID(), expiresAt: t0.addingTimeInterval(3600))),
            .reauthLinkSent(.init(email: "Ana@Example.com", linkID: UUID(), expiresAt: t0, sessionID: session)),
            .reauthGranted(
                .init(grantID: UUID(), sessionID: session, method: "passkey", tokenHash: "ee", expiresAt: t0, passkeyID: UUID())),
            .reauthNonceIssued(.init(nonceID: UUID(), sessionID: session, nonceHash: "ff", expiresAt: t0.addingTimeInterval(300))),
            .holdPlaced(
                Hold(
                    ref: "b-1", kind: .pendingPayout, startsAt: t0, title: nil, amount: Money(currency: "GEL", minor: -5), keyID: "key-1")),
            .accountDisabled(.init(reason: "review")),
            .deletionRequested(.init(by: "apple", blockedBy: [.dispute])),
            .appleNotificationReceived(.init(notificationID: "n-1", type: .emailDisabled, eventTime: t0)),
            .emailAddRequested(
                .init(
                    email: "ana@example.org", linkID: UUID(), expiresAt: t0.addingTimeInterval(1800), tokenHash: "aa", sessionID: session,
                    passwordHash: "h")),
            .emailChanged(
                .init(
                    email: "ana@example.net", previousEmail: "Ana@Example.com", previousEmailVerified: true, linkID: UUID(),
                    revertLinkID: UUID(), revertExpiresAt: t0.addingTimeInterval(604_800), revertTokenHash: "bb", sessionID: session)),
            .passkeyRegistered(
                .init(
                    passkeyID: UUID(), credentialID: "Y3JlZA", publicKey: "cHVi", algorithm: -7, signCount: 3, name: "YubiKey",
                    userHandle: "aGFuZGxl", backupEligible: true, backedUp: false, transports: ["usb", "nfc"], attestationFormat: "packed",
                    sessionID: session)),
            .totpEnrolmentStarted(.init(secret: "JBSWY3DPEHPK3PXP", sessionID: session)),
            .totpEnabled(.init(recoveryCodeHashes: ["c1", "c2"], sessionID: session)),
            .recoveryCodesRegenerated(.init(recoveryCodeHashes: ["c3"], sessionID: UUID())),
            .avatarSet(.init(etag: "3f1c9a0b7d2e4c51", sessionID: session)),
            .localeChosen(.init(locale: "ka")),
            .deletionScheduled(.init(purgeAfter: t0.addingTimeInterval(30 * 86400), cooldownUntil: t0, cooldownKeys: ["k"])),
        ]
        for (index, event) in events.enumerated() { evolve(&state, event, at: t0.addingTimeInterval(Double(index) * 0.000_001)) }
        return state
    }

    @Test("a state round-trips exactly, dates to the bit")
    func roundTrip() throws {
        let state = Self.richState()
        var writer = ByteWriter()
        writer.write(state)
        var reader = ByteReader(writer.bytes)
        #expect(try reader.read(AccountState.self) == state)
        #expect(reader.isAtEnd)
    }

    @Test("truncated or corrupted bytes fail instead of producing a state")
    func damaged() {
        var writer = ByteWriter()
        writer.write(Self.richState())
        for cut in [0, 1, 16, 24, writer.bytes.count / 2, writer.bytes.count - 1] {
            var reader = ByteReader(Array(writer.bytes.prefix(cut)))
            #expect(throws: ByteReader.Failure.self) { try reader.read(AccountState.self) }
        }
        var huge = ByteWriter()
        huge.writeCount(Int(UInt32.max))
        var reader = ByteReader(huge.bytes)
        #expect(throws: ByteReader.Failure.self) { try reader.read([String].self) }
    }

    /// The encoding lists fields by hand: a field added to one of these types must be added to
    /// `AccountState+ByteCodable.swift` (and `AccountSnapshots.format` bumped).
    @Test("every stored field of the state's types is in the encoding")
    func fieldCounts() {
        let state = Self.richState()
        #expect(Mirror(reflecting: state).children.count == 41)
        #expect(Mirror(reflecting: state.passkeys.first!.value).children.count == 12)
        #expect(Mirror(reflecting: state.sessions.first!.value).children.count == 13)
        #expect(Mirror(reflecting: state.pendingLinks.first!.value).children.count == 6)
        let change = AccountState.RevertibleChange(version: 1, sessionID: nil, hadPassword: true, at: Date())
        #expect(Mirror(reflecting: change).children.count == 4)
        #expect(Mirror(reflecting: AccountState.MethodOrigin(version: 1, sessionID: nil, at: Date())).children.count == 3)
        #expect(
            Mirror(reflecting: AccountState.PendingEmail(email: "", linkID: UUID(), passwordHash: "", sessionID: UUID())).children.count
                == 4)
        #expect(Mirror(reflecting: AccountState.TOTPState(secret: "", enabled: true, lastUsedStep: nil)).children.count == 6)
        #expect(Mirror(reflecting: state.reauthGrants.first!.value).children.count == 6)
        #expect(Mirror(reflecting: state.reauthNonces.first!.value).children.count == 4)
        #expect(Mirror(reflecting: state.holds.first!.value).children.count == 7)
        #expect(Mirror(reflecting: state.providerTokens.first!.value).children.count == 4)
        #expect(Mirror(reflecting: Money(currency: "GEL", minor: 1)).children.count == 2)
    }
}
