import Foundation
import LedgerIdentity
import Testing

/// A staff member's stream (docs/support.md "The console"), decided without a database.
@Suite("decide: staff")
struct StaffDecideTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let passkeyID = UUID()

    func fold(_ events: [StaffEvent], into state: StaffState = StaffState(staffID: UUID())) -> StaffState {
        events.reduce(state) { evolve($0, $1, at: now) }
    }

    var invited: StaffState {
        fold([.invited(.init(email: "nino@321.fit", role: .admin, invitationTokenHash: "aa", expiresAt: now.addingTimeInterval(86_400)))])
    }

    func passkey(signCount: Int64 = 0) -> StaffEvent.PasskeyRegistered {
        .init(passkeyID: passkeyID, credentialID: "Y3JlZA", publicKey: "cHVi", algorithm: -7, signCount: signCount, userHandle: "aA")
    }

    func session(_ id: UUID = UUID()) -> StaffCommand.NewSession {
        .init(sessionID: id, tokenHash: "t", expiresAt: now.addingTimeInterval(28_800))
    }

    @Test("the invitation's token registers one passkey, in time, and is used up")
    func registration() throws {
        let registered = try decide(invited, .registerPasskey(passkey(), invitationTokenHash: "aa"), now: now)
        #expect(registered == [.passkeyRegistered(passkey())])
        let after = fold(registered, into: invited)
        #expect(after.invitation == nil)
        #expect(throws: StaffError.invitationExpired) {
            try decide(after, .registerPasskey(passkey(), invitationTokenHash: "aa"), now: now)
        }
        #expect(throws: StaffError.invitationExpired) {
            try decide(invited, .registerPasskey(passkey(), invitationTokenHash: "ab"), now: now)
        }
        #expect(throws: StaffError.invitationExpired) {
            try decide(invited, .registerPasskey(passkey(), invitationTokenHash: "aa"), now: now.addingTimeInterval(86_400))
        }
    }

    @Test("sign-in takes a registered passkey whose counter grows (or stays zero); removal ends every session and every sign-in")
    func signInAndRemoval() throws {
        let staff = fold([.passkeyRegistered(passkey(signCount: 5))], into: invited)
        #expect(throws: StaffError.invalidCredential) {
            try decide(staff, .signIn(passkeyID: passkeyID, signCount: 5, session: session()), now: now)
        }
        #expect(throws: StaffError.invalidCredential) {
            try decide(staff, .signIn(passkeyID: UUID(), signCount: 6, session: session()), now: now)
        }
        let first = UUID()
        let signedIn = fold(try decide(staff, .signIn(passkeyID: passkeyID, signCount: 6, session: session(first)), now: now), into: staff)
        #expect(signedIn.sessions[first]?.isLive(at: now) == true && signedIn.passkeys[passkeyID]?.signCount == 6)
        let removal = try decide(signedIn, .remove, now: now)
        #expect(removal == [.removed(.init()), .signedOut(.init(sessionID: first, reason: "staff_removed"))])
        let removed = fold(removal, into: signedIn)
        #expect(throws: StaffError.invalidCredential) {
            try decide(removed, .signIn(passkeyID: passkeyID, signCount: 7, session: session()), now: now)
        }
        #expect(throws: StaffError.sessionEnded) {
            try decide(removed, .confirmPasskey(passkeyID: passkeyID, signCount: 7, sessionID: first), now: now)
        }
        #expect(try decide(removed, .remove, now: now).isEmpty)
        #expect(throws: StaffError.self) {
            try decide(removed, .invite(email: "nino@321.fit", role: .support, invitationTokenHash: "b", expiresAt: now), now: now)
        }
    }

    @Test("a confirmation needs a live session of this staff member, past its 8 hours none")
    func confirmation() throws {
        let sessionID = UUID()
        let staff = fold([.passkeyRegistered(passkey())], into: invited)
        let signedIn = fold(
            try decide(staff, .signIn(passkeyID: passkeyID, signCount: 0, session: session(sessionID)), now: now), into: staff)
        #expect(try decide(signedIn, .confirmPasskey(passkeyID: passkeyID, signCount: 0, sessionID: sessionID), now: now).count == 1)
        #expect(throws: StaffError.sessionEnded) {
            try decide(
                signedIn, .confirmPasskey(passkeyID: passkeyID, signCount: 0, sessionID: sessionID), now: now.addingTimeInterval(28_800))
        }
        let signedOut = fold(try decide(signedIn, .signOut(sessionID: sessionID), now: now), into: signedIn)
        #expect(try decide(signedOut, .signOut(sessionID: sessionID), now: now).isEmpty)
    }
}
