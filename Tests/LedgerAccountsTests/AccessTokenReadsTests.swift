import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerIdentity
import LedgerTestSupport
import Testing

/// The signed-in reads are batched across concurrent requests (`LookupBatcher`); each caller
/// must still get exactly what its own statement would have read, at its own time.
@Suite("Accounts: batched access-token reads", .timeLimit(.minutes(2)))
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
                let summaryAccount: UUID?
                let introspected: UUID?
                let listed: [UUID]?
            }
            func read(_ token: String, at time: Date) async throws -> Answer {
                let hash = IssuedTokens.tokenHash(token)
                async let session = repository.session(forAccessHash: hash, at: time)
                async let summary = repository.summary(forAccessHash: hash, at: time)
                async let introspection = repository.introspect(accessHash: hash, at: time)
                async let listing = repository.liveSessions(forAccessHash: hash, at: time)
                return Answer(
                    session: try await session, summaryAccount: try await summary?.summary.accountID,
                    introspected: try await introspection?.sessionID, listed: try await listing?.sessions.map(\.sessionID))
            }
            var alone: [String: Answer] = [:]
            for token in tokens {
                let answer = try await read(token.access, at: now)
                #expect((answer.session != nil) == token.live)
                #expect(answer.summaryAccount == (token.live ? token.account : nil))
                #expect(answer.introspected == answer.session?.sessionID)
                if token.live { #expect(answer.listed?.count == (tokens.filter { $0.account == token.account && $0.live }.count)) }
                alone[token.access] = answer
                #expect(
                    try await read(token.access, at: expired) == Answer(session: nil, summaryAccount: nil, introspected: nil, listed: nil))
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
                #expect(answer == (late ? Answer(session: nil, summaryAccount: nil, introspected: nil, listed: nil) : alone[token]))
            }
        }
    }
}
