import LedgerIdentity

extension JSONResponse {
    /// `202 {resend_after}`: a link is on its way; the app counts down "Resend link in 0:27"
    /// (longer once the window's resends are spent).
    static func linkSent(resendAfter: Int) -> JSONResponse {
        JSONResponse(.accepted, ["resend_after": .int(Int64(resendAfter))])
    }
}
