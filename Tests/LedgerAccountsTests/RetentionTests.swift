import LedgerAccounts
import Testing

@Suite("Retention: the cooldown's copy")
struct RetentionTests {
    @Test("the cooldown is spelled in the largest unit that divides it whole, as LEDGER_SIGNUP_COOLDOWN_SECONDS sets it")
    func spelled() {
        #expect(Retention.spelled(604_800) == "7 days")
        #expect(Retention.spelled(86400) == "1 day")
        #expect(Retention.spelled(90000) == "25 hours")
        #expect(Retention.spelled(3600) == "1 hour")
        #expect(Retention.spelled(120) == "2 minutes")
        #expect(Retention.spelled(90) == "90 seconds")
        #expect(Retention.spelled(1) == "1 second")
    }
}
