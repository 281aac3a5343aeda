import Testing

@testable import LedgerServer

@Suite("Content negotiation by Accept")
struct AcceptedFormTests {
    /// The feed's and the stream's pairs: (the other form, the plain form).
    static let pairs = [
        ("application/cloudevents-batch+json", "application/json"), ("application/cloudevents+json", "text/event-stream"),
    ]

    @Test("a tie keeps the plain form: a generated client lists every form at q=1", arguments: pairs)
    func tieKeepsPlain(other: String, plain: String) {
        for accept in ["\(plain), \(other)", "\(other), \(plain)", "\(other);q=0.5, \(plain);q=0.5"] {
            #expect(!AcceptedForm.prefers(other, over: plain, accept: accept), "\(accept)")
        }
    }

    @Test("q-values decide when they differ; the other form alone is chosen", arguments: pairs)
    func qualityDecides(other: String, plain: String) {
        #expect(AcceptedForm.prefers(other, over: plain, accept: other))
        #expect(AcceptedForm.prefers(other, over: plain, accept: "\(plain);q=0.5, \(other)"))
        #expect(AcceptedForm.prefers(other, over: plain, accept: "\(other);q=0.9, \(plain);q=0.8"))
        #expect(!AcceptedForm.prefers(other, over: plain, accept: "\(plain), \(other);q=0.9"))
        #expect(!AcceptedForm.prefers(other, over: plain, accept: "\(other);q=0"))
        #expect(!AcceptedForm.prefers(other, over: plain, accept: nil))
        #expect(!AcceptedForm.prefers(other, over: plain, accept: "*/*"))
    }
}
