import Foundation

/// The code limits' decisions, pure over the facts a repository found under the number's lock
/// (`OTPSendHistory`): every repository asks these, so the rules and their copy live once.
extension OTPPolicy {
    /// Refuses a code the history does not allow, `rate_limited` with the longest wait: the
    /// number's wrong codes of the day first (their own copy), then the number's countdown and
    /// resends, the client's and the account's caps, and the /48's and the country's ceilings.
    public func admitSend(_ history: OTPSendHistory, now: Date) throws {
        try admitCodes(failures: history.failures, now: now)
        let delays = [
            sendDelay(previousSends: history.phone, now: now),
            SlidingWindowLimit(limit: addressLimit, window: capWindow).retryAfter(history.address, now: now),
            SlidingWindowLimit(limit: accountLimit, window: capWindow).retryAfter(history.account, now: now),
            // The oldest send that still fills the window: the ceiling frees when it leaves.
            history.networkFull.map { secondsUntil($0.addingTimeInterval(capWindow), from: now) },
            history.regionFull.map { secondsUntil($0.addingTimeInterval(regionWindow), from: now) },
        ].compactMap { $0 }
        if let wait = delays.max() {
            throw IdentityError(.rateLimited, "Too many codes requested. Try again later.", retryAfter: wait)
        }
    }

    /// Refuses codes for, and checks of codes sent to, a number that took `dailyFailureLimit`
    /// wrong codes in the last `dailyFailureWindow`.
    public func admitCodes(failures: [OTPFailures], now: Date) throws {
        if let wait = dailyFailureDelay(failures, now: now) {
            throw IdentityError(.rateLimited, "Too many incorrect codes for this number. Try again later.", retryAfter: wait)
        }
    }

    /// `resend_after` of a code sent now after the number's `history` for its purpose.
    public func resendAfter(sendingAfter history: OTPSendHistory, now: Date) -> Int {
        sendDelay(previousSends: history.phone + [now], now: now) ?? 0
    }
}
