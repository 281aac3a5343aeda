import Foundation
import Testing

@testable import LedgerIdentity

@Suite("Identity rules")
struct RulesTests {
    @Test("emails are trimmed, compared lower-cased, and bounded by RFC 5321")
    func emails() throws {
        let email = try #require(EmailAddress("  Alice.Smith@Example.COM \n"))
        #expect(email.value == "Alice.Smith@Example.COM")
        #expect(email.normalized == "alice.smith@example.com")
        #expect(email.localPart == "alice.smith")
        // One normalization: "Ä" as one character or as A + combining diaeresis, in either
        // case, is one address.
        let composed = try #require(EmailAddress("\u{C4}rger@example.com"))
        let decomposed = try #require(EmailAddress("a\u{308}rger@example.com"))
        #expect(Array(composed.normalized.utf8) == Array(decomposed.normalized.utf8))
        #expect(Array(composed.normalized.utf8) == Array("\u{E4}rger@example.com".utf8))
        #expect(EmailAddress.normalize(" Alice.Smith@Example.COM ") == email.normalized)
        #expect(EmailAddress(String(repeating: "a", count: 64) + "@example.com") != nil)
        #expect(EmailAddress(String(repeating: "a", count: 65) + "@example.com") == nil)
        #expect(
            EmailAddress(
                "a@" + String(repeating: "b", count: 60) + "." + String(repeating: "c", count: 60) + "."
                    + String(repeating: "d", count: 60) + "." + String(repeating: "e", count: 70) + ".com") == nil)
        for bad in [
            "", "plain", "a@b", "@example.com", "a@@example.com", "a b@example.com", "a@-x.com", ".a@example.com", "a..b@example.com",
        ] {
            #expect(EmailAddress(bad) == nil, "\(bad) should be refused")
        }
    }

    @Test("an ASCII address is judged on its bytes exactly as the Unicode rules judge it")
    func asciiEmailFastPathAgrees() {
        // Every short string of the characters the rules care about, and random longer ones.
        let alphabet = Array("a.Z0-@_ +\t!~\u{7f}")
        var samples: [String] = ["a@b.co", "x@y-.com", "x@-y.com", "a@b..com", "a.@b.com"]
        func grow(_ prefix: String, _ depth: Int) {
            samples.append(prefix + "@ex.com")
            samples.append("ab@" + prefix)
            samples.append(prefix)
            guard depth > 0 else { return }
            for character in alphabet { grow(prefix + String(character), depth - 1) }
        }
        grow("", 3)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let length = Int.random(in: 1...80, using: &generator)
            samples.append(String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        for sample in samples {
            #expect(EmailAddress.isValidASCII(Array(sample.utf8)) == EmailAddress.isValidUnicode(sample), "\(sample.debugDescription)")
            if EmailAddress.isTrimmed(sample) {
                #expect(sample.trimmingCharacters(in: .whitespacesAndNewlines) == sample)
                #expect(EmailAddress.normalize(sample) == sample.lowercased().precomposedStringWithCanonicalMapping)
            }
        }
    }

    @Test("handles: 3–20 of a–z A–Z 0–9 _, compared ignoring case")
    func handles() {
        #expect(Handle("abc") != nil)
        #expect(Handle("Handz_2026") != nil)
        #expect(Handle("ab") == nil)
        #expect(Handle(String(repeating: "a", count: 21)) == nil)
        #expect(Handle("with space") == nil)
        #expect(Handle("dash-ed") == nil)
        #expect(Handle("ünï") == nil)
        #expect(Handle("Handz")?.normalized == Handle("handz")?.normalized)
        let temporary = Handle.temporary { 4_839_217_755 }
        #expect(temporary.value == "user_004839217755")
        #expect(Handle(temporary.value) != nil)
        #expect(Handle.temporary { Handle.temporarySpace - 1 }.value == "user_999999999999")
        // Drawn at random: 10^12 of them, so a thousand draws do not repeat.
        #expect(Set((0..<1000).map { _ in Handle.randomTemporary() }).count == 1000)
    }

    @Test("password rules report every broken rule with the product copy")
    func passwordRules() throws {
        let policy = PasswordPolicy.standard
        let email = try #require(EmailAddress("maria.garcia@example.com"))
        #expect(policy.violations(of: "correct horse battery", email: email).isEmpty)
        let short = policy.violations(of: "1234567", email: email)
        #expect(short.map(\.code) == ["too_short", "too_common", "all_digits"])
        #expect(short.first?.message == "Password must be at least 8 characters.")
        #expect(policy.violations(of: "password", email: email).map(\.code) == ["too_common"])
        #expect(policy.violations(of: "QWERTY123", email: email).map(\.code) == ["too_common"])
        #expect(policy.violations(of: "83920174", email: email).map(\.code) == ["all_digits"])
        #expect(policy.violations(of: "83920174", email: email).first?.message == "Not all numbers")
        #expect(policy.violations(of: "password", email: email).first?.message == "Not a common password")
        #expect(policy.violations(of: "maria.garcia1", email: email).map(\.code) == ["similar_to_email"])
        #expect(policy.violations(of: "Garcia!2026x", email: email).map(\.code) == ["similar_to_email"])
        let same = policy.violations(of: "correct horse battery", email: email, isCurrentPassword: { true })
        #expect(same.map(\.code) == ["same_as_current"])
        #expect(same.first?.message == "Pick something different from your current password.")
    }
}

@Suite("Account events and state")
struct AccountStateTests {
    @Test("strangers' reset requests cannot grow an account's state: expired links and old send times are forgotten")
    func linksArePruned() throws {
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        var state = AccountState(accountID: UUID())
        evolve(&state, .registered(.init(email: "ana@example.com", displayName: nil, method: "email")), at: start)
        // Ten days of the most the rate allows: four reset links every 15 minutes.
        for slot in 0..<(10 * 96) {
            for send in 0..<4 {
                let time = start.addingTimeInterval(Double(slot * 900 + send))
                evolve(
                    &state,
                    .passwordResetRequested(
                        .init(
                            email: "ana@example.com", linkID: UUID(), expiresAt: time.addingTimeInterval(1800), tokenHash: "t")), at: time)
            }
        }
        // What is left: the links of the last half hour, the send times the largest limit reads.
        #expect(state.pendingLinks.count <= 12)
        #expect((state.linkSendTimes[.passwordReset]?.count ?? 0) <= LinkResendPolicy.largestLimit + 1)
        #expect(state.version == 1 + 10 * 96 * 4)
    }

    @Test("events round-trip through their JSON payloads; times are written to the second")
    func roundTrip() throws {
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        // A payload written from now on holds whole seconds; one stored with a fraction still reads.
        let fractional = AccountEvent.purged(.init(deletedAt: now.addingTimeInterval(0.75)))
        #expect(!String(decoding: try fractional.encodedPayload(), as: UTF8.self).contains("."))
        let stored = Array(#"{"deleted_at":"2026-09-21T14:13:20.5Z"}"#.utf8)
        #expect(
            try AccountEvent.decode(type: "account.purged", schemaVersion: 1, payload: stored)
                == .purged(.init(deletedAt: now.addingTimeInterval(0.5))))
        let events: [AccountEvent] = [
            .registered(.init(email: "a@b.co", displayName: "A", method: "email")),
            .passwordSet(.init(passwordHash: "$scrypt$ln=17,r=8,p=1$c2FsdA$aGFzaA", reason: .signup)),
            .sessionStarted(
                .init(
                    sessionID: UUID(), method: "email", device: "ios", accessTokenHash: "aa", refreshTokenHash: "bb",
                    accessExpiresAt: now, refreshExpiresAt: now.addingTimeInterval(60))),
            .handleClaimed(.init(handle: "user_000001", temporary: true)),
            .phoneLinked(.init(phone: "+995511200300", region: "GE", requestID: UUID())),
            .phoneChanged(.init(phone: "+995511100000", region: "GE", previousPhone: "+995511200300", requestID: nil)),
            .reauthGranted(.init(grantID: UUID(), sessionID: UUID(), method: "phone", tokenHash: "cc", expiresAt: now, linkID: UUID())),
            .reauthFailed(.init(sessionID: UUID(), method: "password")),
            .reauthLinkSent(.init(email: "a@b.co", linkID: UUID(), expiresAt: now, tokenHash: "dd", sessionID: UUID())),
            .emailAdded(.init(email: "a@b.co")),
            .emailChangeRequested(.init(email: "n@b.co", linkID: UUID(), expiresAt: now, tokenHash: "ee", sessionID: UUID())),
            .emailChanged(
                .init(
                    email: "n@b.co", previousEmail: "a@b.co", previousEmailVerified: true, linkID: UUID(), revertLinkID: UUID(),
                    revertExpiresAt: now, revertTokenHash: "ff")),
            .emailReverted(.init(email: "a@b.co", linkID: UUID())),
            .providerLinked(.init(provider: .apple, subject: "001.x", email: nil, emailVerified: false)),
            .providerUnlinked(.init(provider: .google, subject: "g-1")),
            .holdPlaced(.init(ref: "b-1", kind: .pendingPayout, amount: .init(currency: "EUR", minor: 32050), releasesAt: now)),
            .holdReleased(.init(ref: "b-1")),
            .holdLapsed(.init(ref: "s-1", startsAt: now)),
            .deletionScheduled(.init(purgeAfter: now, cooldownUntil: now, cooldownKeys: ["ab"])),
            .purged(.init(deletedAt: now)),
        ]
        for event in events {
            let decoded = try AccountEvent.decode(type: event.type, schemaVersion: event.schemaVersion, payload: event.encodedPayload())
            #expect(decoded == event)
        }
        #expect(try AccountEvent.decode(type: "account.archived", schemaVersion: 1, payload: Array("{}".utf8)) == nil)
        let otpEvents: [OTPEvent] = [
            .issued(
                .init(
                    accountID: UUID(), sessionID: nil, purpose: .signIn, phone: "+995511200300", region: "GE", codeHash: "ee",
                    expiresAt: now, maxAttempts: 5)),
            .failed(.init(attempt: 1, attemptsRemaining: 4)), .verified(.init(accountID: UUID())),
            .invalidated(.init(reason: .superseded)), .cancelled(.init()),
        ]
        for event in otpEvents {
            #expect(try OTPEvent.decode(type: event.type, schemaVersion: event.schemaVersion, payload: event.encodedPayload()) == event)
        }
    }

    @Test("evolve folds registration, sessions, refresh and revocation")
    func fold() {
        let id = UUID()
        let session = UUID()
        let t0 = Date(timeIntervalSince1970: 1_790_000_000)
        let state = AccountState.replay(
            id,
            [
                (.registered(.init(email: "A@b.co", displayName: nil, method: "email")), t0),
                (.passwordSet(.init(passwordHash: "h1", reason: .signup)), t0),
                (
                    .sessionStarted(
                        .init(
                            sessionID: session, method: "email", device: nil, accessTokenHash: "a1",
                            refreshTokenHash: "r1", accessExpiresAt: t0, refreshExpiresAt: t0)), t0
                ),
                (
                    .sessionRefreshed(
                        .init(
                            sessionID: session, accessTokenHash: "a2", refreshTokenHash: "r2",
                            accessExpiresAt: t0, refreshExpiresAt: t0)), t0.addingTimeInterval(10)
                ),
                (.emailVerified(.init(email: "a@B.co")), t0.addingTimeInterval(20)),
                (.sessionRevoked(.init(sessionID: session, reason: "logout")), t0.addingTimeInterval(30)),
            ])
        #expect(state.exists)
        #expect(state.version == 6)
        #expect(state.hasPassword)
        #expect(state.passwordChangedAt == t0)
        #expect(state.emailVerified)
        #expect(state.sessions[session]?.refreshTokenHash == "r2")
        #expect(state.sessions[session]?.lastUsedAt == t0.addingTimeInterval(10))
        #expect(state.sessions[session]?.isActive == false)
        #expect(state.sessions[session]?.revokedReason == "logout")
    }
}
