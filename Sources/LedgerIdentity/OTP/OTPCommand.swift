import Foundation

/// What a caller asks of an OTP request. The code's hash is computed before `decide` (it
/// needs a key), so `decide` stays pure.
public enum OTPCommand: Sendable, Equatable {
    case issue(OTPEvent.Issued)
    /// A code was entered: its keyed hash, the session entering it (nil when signed out), the
    /// account a successful verification acts on, and whether the account the code was
    /// requested for has been deleted since (its codes ended with it).
    case verify(presentedCodeHash: String, sessionID: UUID?, accountID: UUID, accountDeleted: Bool = false)
    /// Back navigation: the code can no longer be used.
    case cancel(sessionID: UUID?)
    /// A newer code was sent for the same number and purpose.
    case supersede
}
