import LedgerIdentity

extension JSONResponse {
    /// `202 {resend_after}`: a link is on its way; the app counts down "Resend link in 0:27".
    static var linkSent: JSONResponse {
        JSONResponse(.accepted, ["resend_after": .int(Int64(Policies.standard.linkResendInterval))])
    }
}
