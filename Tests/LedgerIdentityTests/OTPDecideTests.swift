import Foundation
import LedgerIdentity
import Testing

@Suite("decide: OTP requests")
struct OTPDecideTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let requestID = UUID()
    let accountID = UUID()

    func issued(session: UUID? = nil, ttl: TimeInterval = 300) throws -> OTPChallenge {
        let issue = OTPEvent.Issued(
            accountID: accountID, sessionID: session, purpose: session == nil ? .signIn : .reauth, phone: "+995511200300",
            region: "GE", codeHash: "right", expiresAt: now.addingTimeInterval(ttl), maxAttempts: 5)
        let events = try decide(OTPChallenge(requestID: requestID), .issue(issue), now: now)
        return fold(OTPChallenge(requestID: requestID), events)
    }

    func fold(_ state: OTPChallenge, _ events: [OTPEvent]) -> OTPChallenge {
        events.reduce(state) { evolve($0, $1, at: now) }
    }

    func verify(_ state: OTPChallenge, _ code: String, at time: Date, session: UUID? = nil) throws -> [OTPEvent] {
        try decide(state, .verify(presentedCodeHash: code, sessionID: session, accountID: accountID), now: time)
    }

    @Test("a code requested before its account was deleted ends unused, even the right one")
    func accountDeleted() throws {
        let state = try issued()
        let events = try decide(
            state, .verify(presentedCodeHash: "right", sessionID: nil, accountID: accountID, accountDeleted: true), now: now)
        #expect(events == [.invalidated(.init(reason: .accountDeleted))])
        #expect(OTPVerdict(events).error == .codeExpired)
        #expect(throws: IdentityError.codeExpired) { try verify(fold(state, events), "right", at: now) }
    }

    @Test("the TTL edge: a second before expiry verifies, at and after expiry the code is invalidated")
    func ttlEdge() throws {
        let state = try issued()
        #expect(OTPVerdict(try verify(state, "right", at: now.addingTimeInterval(299))) == .verified)
        let late = try verify(state, "right", at: now.addingTimeInterval(300))
        #expect(late == [.invalidated(.init(reason: .expired))])
        #expect(OTPVerdict(late) == .expired)
        #expect(OTPVerdict(try verify(state, "right", at: now.addingTimeInterval(301))).error == .codeExpired)
    }

    @Test("wrong codes 1–4 answer attempts_remaining 4…1; the 5th invalidates; then even the right code is refused")
    func attempts() throws {
        var state = try issued()
        for attempt in 1...4 {
            let events = try verify(state, "wrong", at: now)
            #expect(OTPVerdict(events) == .incorrect(attemptsRemaining: 5 - attempt))
            #expect(OTPVerdict(events).error?.attemptsRemaining == 5 - attempt)
            #expect(OTPVerdict(events).error?.message == "Code is incorrect. Try again.")
            state = fold(state, events)
        }
        let fifth = try verify(state, "wrong", at: now)
        #expect(fifth == [.failed(.init(attempt: 5, attemptsRemaining: 0)), .invalidated(.init(reason: .attemptsExhausted))])
        #expect(OTPVerdict(fifth) == .expired)
        #expect(OTPVerdict(fifth).error?.message == "Code expired. Request a new one.")
        state = fold(state, fifth)
        #expect(throws: IdentityError.codeExpired) { try verify(state, "right", at: now) }
    }

    @Test("a verified code is used up; an unknown request looks expired")
    func oneShot() throws {
        let state = fold(try issued(), try verify(try issued(), "right", at: now))
        #expect(state.status == .verified)
        #expect(throws: IdentityError.codeExpired) { try verify(state, "right", at: now) }
        #expect(throws: IdentityError.codeExpired) { try verify(OTPChallenge(requestID: UUID()), "right", at: now) }
    }

    @Test("cancelling (back navigation) makes the code unusable; cancelling twice changes nothing")
    func cancel() throws {
        let state = fold(try issued(), try decide(try issued(), .cancel(sessionID: nil), now: now))
        #expect(state.status == .cancelled)
        #expect(throws: IdentityError.codeExpired) { try verify(state, "right", at: now) }
        #expect(try decide(state, .cancel(sessionID: nil), now: now).isEmpty)
        #expect(throws: IdentityError.self) { try decide(OTPChallenge(requestID: UUID()), .cancel(sessionID: nil), now: now) }
    }

    @Test("a newer code supersedes an open one")
    func supersede() throws {
        let state = fold(try issued(), try decide(try issued(), .supersede, now: now))
        #expect(state.status == .invalidated(.superseded))
        #expect(try decide(state, .supersede, now: now).isEmpty)
    }

    @Test("a signed-in request's code works only in the session that asked for it")
    func otherSession() throws {
        let mine = UUID()
        let state = try issued(session: mine)
        #expect(throws: IdentityError.codeExpired) { try verify(state, "right", at: now, session: UUID()) }
        #expect(throws: IdentityError.codeExpired) { try verify(state, "right", at: now, session: nil) }
        #expect(OTPVerdict(try verify(state, "right", at: now, session: mine)) == .verified)
    }
}

@Suite("OTP send limits")
struct OTPSendLimitTests {
    let start = Date(timeIntervalSince1970: 1_790_000_000)
    let policy = OTPPolicy()

    @Test("the first send and 3 resends in 15 minutes; the 5th is refused until the first leaves the window")
    func resendWindow() {
        var sends: [Date] = []
        for index in 0..<4 {
            let time = start.addingTimeInterval(Double(index) * 60)
            #expect(policy.sendDelay(previousSends: sends, now: time) == nil, "send \(index + 1)")
            sends.append(time)
        }
        let fifth = start.addingTimeInterval(240)
        #expect(policy.sendDelay(previousSends: sends, now: fifth) == 660)
        #expect(policy.sendDelay(previousSends: sends, now: start.addingTimeInterval(899)) == 1)
        #expect(policy.sendDelay(previousSends: sends, now: start.addingTimeInterval(900)) == nil)
    }

    @Test("the resend countdown: 30 seconds between two sends")
    func interval() {
        let sends = [start]
        #expect(policy.sendDelay(previousSends: sends, now: start.addingTimeInterval(3)) == 27)
        #expect(policy.sendDelay(previousSends: sends, now: start.addingTimeInterval(29.5)) == 1)
        #expect(policy.sendDelay(previousSends: sends, now: start.addingTimeInterval(30)) == nil)
    }

    @Test("sliding windows count only the last window's occurrences")
    func slidingWindow() {
        let cap = SlidingWindowLimit(limit: 2, window: 100)
        let times = [start, start.addingTimeInterval(50)]
        #expect(cap.retryAfter([], now: start) == nil)
        #expect(cap.retryAfter(times, now: start.addingTimeInterval(60)) == 40)
        #expect(cap.retryAfter(times, now: start.addingTimeInterval(100)) == nil)
        #expect(SlidingWindowLimit(limit: 0, window: 100).retryAfter([], now: start) == 100)
    }

    @Test("the daily cap: 20 wrong codes per number in 24 hours, the oldest leaving the window first")
    func dailyFailures() {
        #expect(policy.dailyFailureDelay([], now: start) == nil)
        let failures = [
            (start, 5), (start.addingTimeInterval(600), 5), (start.addingTimeInterval(1200), 5), (start.addingTimeInterval(1800), 4),
        ]
        let nineteen = failures.map { OTPFailures(requestedAt: $0.0, count: $0.1) }
        #expect(policy.dailyFailureDelay(nineteen, now: start.addingTimeInterval(2000)) == nil)
        let twenty = nineteen + [OTPFailures(requestedAt: start.addingTimeInterval(1900), count: 1)]
        // 20 reached: free again when the first request's 5 leave the window, 24 hours after it.
        #expect(policy.dailyFailureDelay(twenty, now: start.addingTimeInterval(2000)) == 86_400 - 2000)
        #expect(policy.dailyFailureDelay(twenty, now: start.addingTimeInterval(86_399)) == 1)
    }

    @Test("a send is refused by the longest wait of every limit, the number's wrong codes first, with the spec's copy")
    func admitSend() throws {
        var history = OTPSendHistory()
        try policy.admitSend(history, now: start)
        #expect(policy.resendAfter(sendingAfter: history, now: start) == 30)
        // The countdown: 30 s after the last send.
        history.phone = [start]
        let countdown = try #require(refusal { try policy.admitSend(history, now: start.addingTimeInterval(10)) })
        #expect(countdown.retryAfter == 20 && countdown.message == "Too many codes requested. Try again later.")
        // The client's cap (30 per 15 minutes) outwaits the countdown.
        history.address = (0..<30).map { start.addingTimeInterval(Double($0 - 30)) }
        #expect(refusal { try policy.admitSend(history, now: start.addingTimeInterval(10)) }?.retryAfter == 860)
        // The /48's ceiling: free when the send that fills it leaves the window.
        history = OTPSendHistory()
        history.networkFull = start
        #expect(refusal { try policy.admitSend(history, now: start.addingTimeInterval(100)) }?.retryAfter == 800)
        // The country's hourly ceiling likewise.
        history = OTPSendHistory()
        history.regionFull = start
        #expect(refusal { try policy.admitSend(history, now: start.addingTimeInterval(600)) }?.retryAfter == 3000)
        // A number that took 20 wrong codes today is refused with its own copy, whatever else allows.
        history = OTPSendHistory()
        history.failures = [OTPFailures(requestedAt: start, count: 20)]
        let wrong = try #require(refusal { try policy.admitSend(history, now: start.addingTimeInterval(60)) })
        #expect(wrong.message == "Too many incorrect codes for this number. Try again later." && wrong.retryAfter == 86_340)
        #expect(refusal { try policy.admitCodes(failures: [OTPFailures(requestedAt: start, count: 19)], now: start) } == nil)
    }

    func refusal(_ body: () throws -> Void) -> IdentityError? {
        do {
            try body()
            return nil
        } catch {
            return error as? IdentityError
        }
    }
}
