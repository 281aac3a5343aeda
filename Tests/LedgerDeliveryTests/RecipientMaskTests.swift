import LedgerDelivery
import Testing

@Suite("Recipients masked")
struct RecipientMaskTests {
    @Test("addresses and numbers keep only enough to tell them apart, in a relay's error text too")
    func masks() {
        #expect(RecipientMask.mask("ana@example.com") == "a•••@example.com")
        #expect(RecipientMask.mask("+995511200300") == "+9955•••300")
        #expect(RecipientMask.mask("x") == "•••")
        #expect(
            RecipientMask.maskingRecipients(in: "550 5.1.1 <ana.k@example.com>: Recipient address rejected; call +995 511 200 300")
                == "550 5.1.1 <a•••@example.com>: Recipient address rejected; call +9955•••300")
    }
}
