import Foundation
import LedgerIdentity
import Testing

@Suite("decide: the avatar")
struct AvatarDecideTests {
    let base = DecideTests()
    var now: Date { base.now }

    @Test("a picture is set for a live session, replaced by the next, and removed once; the same version twice appends nothing")
    func setReplaceRemove() throws {
        let session = UUID()
        var state = try base.registered(session: session)
        let first = try decide(state, .setAvatar(etag: "e1", sessionID: session), now: now)
        #expect(first == [.avatarSet(.init(etag: "e1", sessionID: session))])
        state = base.apply(state, first)
        #expect(state.avatarETag == "e1")
        #expect(try decide(state, .setAvatar(etag: "e1", sessionID: session), now: now).isEmpty)
        state = base.apply(state, try decide(state, .setAvatar(etag: "e2", sessionID: session), now: now))
        #expect(state.avatarETag == "e2")
        let removed = try decide(state, .removeAvatar(sessionID: session), now: now)
        #expect(removed == [.avatarRemoved(.init(etag: "e2", sessionID: session))])
        state = base.apply(state, removed)
        #expect(state.avatarETag == nil)
        #expect(try decide(state, .removeAvatar(sessionID: session), now: now).isEmpty)
        for command in [AccountCommand.setAvatar(etag: "e3", sessionID: session), .removeAvatar(sessionID: session)] {
            #expect(command.undeclared(in: try decide(state, command, now: now)).isEmpty)
        }
    }

    @Test("a session that ended, or a deleted account, changes no picture")
    func endedSessionOrDeletedAccount() throws {
        let session = UUID()
        let state = try base.registered(session: session)
        let signedOut = base.apply(state, [.sessionRevoked(.init(sessionID: session, reason: "signed_out"))])
        #expect(throws: IdentityError.sessionExpired) { try decide(signedOut, .setAvatar(etag: "e1", sessionID: session), now: now) }
        #expect(throws: IdentityError.sessionExpired) { try decide(state, .setAvatar(etag: "e1", sessionID: UUID()), now: now) }
        let deleted = base.apply(
            state, [.deletionScheduled(.init(purgeAfter: now.addingTimeInterval(86400), cooldownUntil: now, cooldownKeys: []))])
        #expect(throws: IdentityError.self) { try decide(deleted, .setAvatar(etag: "e1", sessionID: session), now: now) }
    }
}
