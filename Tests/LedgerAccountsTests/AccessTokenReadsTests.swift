import Foundation
import LedgerAccounts
import LedgerCore
import LedgerIdentity
import LedgerPostgres
import LedgerTestSupport
import Testing

@testable import LedgerAccountsPostgres

/// The signed-in reads are batched across concurrent requests (`LookupBatcher`); each caller
/// must still get exactly what its own statement would have read, at its own time.
@Suite("Accounts: batched access-token reads", .timeLimit(.minutes(10)))
struct AccessTokenReadsTests {
    @Test("hundreds of concurrent reads of live, revoked, expired and unknown tokens each get their own answer")
    func concurrentReadsMatchLoneReads() async throws {
        try await TestPostgres.withDatabase { db in
            let store = try db.eventStore()
            let service = AccountService(environment: try db.accountsEnvironment(store))
            let repository = db.accountRepository(store)
            // 12 accounts signed in on 3 devices each; one session of every third account ended.
            var tokens: [(access: String, live: Bool, account: UUID)] = []
            for index in 0..<12 {
                let email = "reader-\(index)@example.com"
                let first = try await service.signUp(email: email, password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
                var sessions = [first]
                for _ in 0..<2 {
                    sessions.append(try await service.signIn(email: email, password: "violet-harbor-91", device: nil))
                }
                for (position, session) in sessions.enumerated() {
                    let revoked = index % 3 == 0 && position == 1
                    if revoked {
                        try await service.revoke(
                            session: SessionRef(accountID: session.accountID, sessionID: session.sessionID), reason: "logout")
                    }
                    tokens.append((session.accessToken, !revoked, session.accountID))
                }
            }
            tokens.append(("la_not_a_token", false, UUID()))
            let now = db.clock.now()
            let expired = now.addingTimeInterval(Policies.standard.accessTokenLifetime + 1)

            // Each read alone first (a batch of one), as the reference.
            struct Answer: Equatable {
                let session: SessionRef?
                let summary: AccountSummary?
                let summarySession: SessionRef?
                let introspection: Introspection?
                let listing: [SessionListing]?
                let listingSession: SessionRef?

                static let nothing = Answer(
                    session: nil, summary: nil, summarySession: nil, introspection: nil, listing: nil, listingSession: nil)
            }
            func read(_ token: String, at time: Date) async throws -> Answer {
                let hash = IssuedTokens.tokenHash(token)
                async let session = repository.session(forAccessHash: hash, at: time)
                async let summary = repository.summary(forAccessHash: hash, at: time)
                async let introspection = repository.introspect(accessHash: hash, at: time)
                async let listing = repository.liveSessions(forAccessHash: hash, at: time)
                let (summaryRead, listingRead) = (try await summary, try await listing)
                return Answer(
                    session: try await session, summary: summaryRead?.summary, summarySession: summaryRead?.session,
                    introspection: try await introspection, listing: listingRead?.sessions, listingSession: listingRead?.session)
            }
            var alone: [String: Answer] = [:]
            for token in tokens {
                let answer = try await read(token.access, at: now)
                #expect((answer.session != nil) == token.live)
                #expect(answer.session?.accountID == (token.live ? token.account : nil))
                #expect(answer.summary?.accountID == answer.session?.accountID && answer.summarySession == answer.session)
                #expect(answer.introspection?.sessionID == answer.session?.sessionID && answer.listingSession == answer.session)
                if token.live { #expect(answer.listing?.count == (tokens.filter { $0.account == token.account && $0.live }.count)) }
                alone[token.access] = answer
                #expect(try await read(token.access, at: expired) == .nothing)
            }

            // Then all at once, every token twice at its own time: now and past its expiry, in
            // the same batches.
            let statementsBefore = db.client.statementsSent
            let together = try await withThrowingTaskGroup(of: (String, Bool, Answer).self) { group in
                for round in 0..<4 {
                    for token in tokens {
                        let late = round % 2 == 1
                        group.addTask { (token.access, late, try await read(token.access, at: late ? expired : now)) }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(together.count == tokens.count * 4)
            #expect(db.client.statementsSent - statementsBefore < tokens.count * 4 * 4, "the reads shared statements")
            for (token, late, answer) in together {
                #expect(answer == (late ? Answer.nothing : alone[token]))
            }
        }
    }

    @Test("one statement reads each lookup at its own time: one token live now and expired later, a revoked one, an unknown one")
    func oneStatementEachAtItsOwnTime() async throws {
        try await TestPostgres.withDatabase { db in
            let store = try db.eventStore()
            let service = AccountService(environment: try db.accountsEnvironment(store))
            let email = "timely@example.com"
            let kept = try await service.signUp(email: email, password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            let ended = try await service.signIn(email: email, password: "violet-harbor-91", device: "tablet")
            try await service.revoke(session: SessionRef(accountID: ended.accountID, sessionID: ended.sessionID), reason: "logout")
            let now = db.clock.now()
            let keptHash = IssuedTokens.tokenHash(kept.accessToken)
            let lookups = [
                AccessLookup(hash: keptHash, time: now),
                AccessLookup(hash: keptHash, time: now.addingTimeInterval(Policies.standard.accessTokenLifetime + 1)),
                AccessLookup(hash: IssuedTokens.tokenHash(ended.accessToken), time: now),
                AccessLookup(hash: IssuedTokens.tokenHash("la_unknown"), time: now),
                AccessLookup(hash: keptHash, time: now.addingTimeInterval(60)),
            ]
            let keptRef = SessionRef(accountID: kept.accountID, sessionID: kept.sessionID)
            let live: Set = [lookups[0], lookups[4]]

            // A client of its own: the service's background work does not count.
            let client = PostgresClient(configuration: .init(url: db.url))
            var before = client.statementsSent
            let sessions = try await AccessTokenReads.sessionRead.values(lookups, client: client)
            #expect(client.statementsSent - before == 1)
            #expect(sessions == Dictionary(uniqueKeysWithValues: live.map { ($0, keptRef) }))

            before = client.statementsSent
            let summaries = try await AccessTokenReads.summaryRead.values(lookups, client: client)
            #expect(client.statementsSent - before == 1)
            #expect(Set(summaries.keys) == live)
            #expect(summaries.values.allSatisfy { $0.session == keptRef && $0.summary.email == email })

            let introspections = try await AccessTokenReads.introspectionRead.values(lookups, client: client)
            #expect(Set(introspections.keys) == live)
            #expect(introspections.values.allSatisfy { $0.sessionID == kept.sessionID && $0.accountID == kept.accountID })

            // The sessions screen lists the live session only (the revoked one is gone), per lookup.
            let listings = try await AccessTokenReads.liveSessionsRead.values(lookups, client: client)
            #expect(Set(listings.keys) == live)
            #expect(listings.values.allSatisfy { $0.session == keptRef && $0.sessions.map(\.sessionID) == [kept.sessionID] })
            await client.shutdown()
        }
    }
}

/// `SessionActivity` on PostgreSQL: the noted uses of a beat are one statement, whatever their number.
@Suite("Accounts: session uses written together", .timeLimit(.minutes(10)))
struct SessionUseWritesTests {
    @Test("the uses of a beat are one UPDATE; each session moves once a minute at most, a revoked one never")
    func oneStatementABeat() async throws {
        try await TestPostgres.withDatabase { db in
            let store = try db.eventStore()
            let service = AccountService(environment: try db.accountsEnvironment(store))
            var sessions: [AccountService.Session] = []
            for index in 0..<5 {
                sessions.append(
                    try await service.signUp(
                        email: "used-\(index)@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil))
            }
            try await service.revoke(
                session: SessionRef(accountID: sessions[4].accountID, sessionID: sessions[4].sessionID), reason: "logout")
            await service.activity.settle()
            db.clock.advance(by: 120)
            for session in sessions { _ = try await service.authenticate(accessToken: session.accessToken) }
            // The store NOTIFYs other processes of the sign-ups' commits through the same pool a
            // moment later, on its own: counted from when that is out.
            let before = try await db.client.quietStatementCount()
            await service.activity.settle()
            #expect(db.client.statementsSent - before == 1)
            let moved = try await db.client.query(
                "SELECT count(*) FILTER (WHERE last_used_at = $1), count(*) FROM sessions", [.timestamp(db.clock.now())])
            #expect(try moved[0].int(0) == 4 && (try moved[0].int(1)) == 5)
            // Within the minute, nothing more is written.
            db.clock.advance(by: 30)
            for session in sessions { _ = try await service.authenticate(accessToken: session.accessToken) }
            let again = try await db.client.quietStatementCount()
            await service.activity.settle()
            #expect(db.client.statementsSent == again)
        }
    }
}
