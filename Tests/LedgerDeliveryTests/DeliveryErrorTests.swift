import LedgerDelivery
import Testing

@Suite("Delivery errors")
struct DeliveryErrorTests {
    @Test("a permanent failure is not retried; a temporary one and the operator's configuration are")
    func retryable() {
        #expect(DeliveryError("552 mailbox full", kind: .permanent).isRetryable == false)
        #expect(DeliveryError("421 try later").isRetryable)
        #expect(DeliveryError("535 authentication failed", kind: .configuration).isRetryable)
    }
}
