import Foundation
import LedgerAccounts
import LedgerIdentity
import Testing

/// The code rules of the product spec without a database: the same `decide`, `evolve` and
/// limits as the PostgreSQL repository, over `InMemoryOTPRepository`.
@Suite("Phone codes in memory: sign-in, attempts, resends, expiry, daily cap")
struct OTPServiceTests {
    static let phone = "+995511200300"

    func request(_ world: InMemoryAccounts, client: String? = "198.51.100.7") async throws -> OTPService.Requested {
        try await world.otp.request(phone: Self.phone, country: nil, purpose: "sign_in", session: nil, reauthToken: nil, client: client)
    }

    func verify(_ world: InMemoryAccounts, _ requested: OTPService.Requested, code: String) async throws -> OTPService.Outcome {
        try await world.otp.verify(
            requestID: requested.requestID.uuidString, code: code, session: nil, reauthToken: nil, device: "test")
    }

    func wrong(_ code: String) -> String { code == "000000" ? "111111" : "000000" }

    func error(_ body: () async throws -> Any) async -> IdentityError? {
        do {
            _ = try await body()
            return nil
        } catch {
            if !(error is IdentityError) { Issue.record("not an IdentityError: \(error)") }
            return error as? IdentityError
        }
    }

    @Test("a right code signs up a new number, and signs the same account in the next time")
    func signIn() async throws {
        let world = try InMemoryAccounts()
        let first = try await request(world)
        #expect(first.expiresIn == 300 && first.resendAfter == 30)
        guard case .session(let created, created: true) = try await verify(world, first, code: try await world.lastCode(to: Self.phone))
        else {
            Issue.record("no new account")
            return
        }
        world.clock.advance(by: 31)
        let second = try await request(world)
        guard case .session(let again, created: false) = try await verify(world, second, code: try await world.lastCode(to: Self.phone))
        else {
            Issue.record("no sign-in")
            return
        }
        #expect(again.accountID == created.accountID && again.sessionID != created.sessionID)
        // A used code is used up.
        #expect(await error { try await verify(world, second, code: try await world.lastCode(to: Self.phone)) }?.code == .codeExpired)
    }

    @Test("5 wrong codes: each says how many are left, the fifth ends the code (code_expired)")
    func attempts() async throws {
        let world = try InMemoryAccounts()
        let requested = try await request(world)
        let code = try await world.lastCode(to: Self.phone)
        for remaining in (1..<5).reversed() {
            let refused = await error { try await verify(world, requested, code: wrong(code)) }
            #expect(refused?.code == .incorrectCode && refused?.attemptsRemaining == remaining)
        }
        #expect(await error { try await verify(world, requested, code: wrong(code)) }?.code == .codeExpired)
        #expect(await error { try await verify(world, requested, code: code) }?.code == .codeExpired)
    }

    @Test("a code lasts 5 minutes")
    func expiry() async throws {
        let world = try InMemoryAccounts()
        let requested = try await request(world)
        let code = try await world.lastCode(to: Self.phone)
        world.clock.advance(by: 300)
        #expect(await error { try await verify(world, requested, code: code) }?.code == .codeExpired)
    }

    @Test("resends: 30 s apart, 3 per 15 minutes; a new code replaces the open one")
    func resends() async throws {
        let world = try InMemoryAccounts()
        let first = try await request(world)
        let firstCode = try await world.lastCode(to: Self.phone)
        world.clock.advance(by: 10)
        let early = await error { try await request(world) }
        #expect(early?.code == .rateLimited && early?.retryAfter == 20 && early?.message == "Too many codes requested. Try again later.")
        world.clock.advance(by: 20)
        _ = try await request(world)
        // The first code was superseded by the second.
        #expect(await error { try await verify(world, first, code: firstCode) }?.code == .codeExpired)
        for _ in 0..<2 {
            world.clock.advance(by: 30)
            _ = try await request(world)
        }
        // The first send and 3 resends in 90 s: the next waits for the first to leave the window.
        world.clock.advance(by: 30)
        #expect(await error { try await request(world) }?.retryAfter == 900 - 120)
    }

    @Test("20 wrong codes a day for one number: no more codes, and no more checks, until they age out")
    func dailyCap() async throws {
        let world = try InMemoryAccounts()
        var last: OTPService.Requested?
        for _ in 0..<4 {
            let requested = try await request(world, client: nil)
            let code = try await world.lastCode(to: Self.phone)
            for _ in 0..<5 { _ = await error { try await verify(world, requested, code: wrong(code)) } }
            last = requested
            world.clock.advance(by: 901)
        }
        let refused = await error { try await request(world, client: nil) }
        #expect(refused?.code == .rateLimited && refused?.message == "Too many incorrect codes for this number. Try again later.")
        #expect(await error { try await verify(world, try #require(last), code: "123456") }?.code == .rateLimited)
        world.clock.advance(by: 86_400)
        _ = try await request(world, client: nil)
    }

    @Test("the numbers are the policies': a shorter code lifetime and fewer attempts, configured")
    func configured() async throws {
        var policies = Policies.standard
        policies.otp.ttl = 60
        policies.otp.maxAttempts = 2
        let world = try InMemoryAccounts(policies: policies)
        let requested = try await request(world)
        #expect(requested.expiresIn == 60)
        let code = try await world.lastCode(to: Self.phone)
        #expect(await error { try await verify(world, requested, code: wrong(code)) }?.attemptsRemaining == 1)
        #expect(await error { try await verify(world, requested, code: wrong(code)) }?.code == .codeExpired)
        #expect(await error { try await verify(world, requested, code: code) }?.code == .codeExpired)
    }

    @Test("eight concurrent checks of one right code: exactly one signs in, as under PostgreSQL's locks")
    func concurrentChecks() async throws {
        let world = try InMemoryAccounts()
        let requested = try await request(world)
        let code = try await world.lastCode(to: Self.phone)
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    (try? await world.otp.verify(
                        requestID: requested.requestID.uuidString, code: code, session: nil, reauthToken: nil, device: "test")) != nil
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 1)
    }
}
