import Testing

@testable import LedgerServer

@Suite("Content negotiation by Accept")
struct AcceptedFormTests {
    /// The feed's pair and the stream's: (the other form, the plain form).
    static let pairs = [
        ("application/cloudevents-batch+json", "application/json"), ("application/cloudevents+json", "text/event-stream"),
    ]

    @Test("the feed: a tie keeps the plain form, as a generated client lists every form at q=1")
    func tieKeepsPlain() {
        let (other, plain) = ("application/cloudevents-batch+json", "application/json")
        for accept in ["\(plain), \(other)", "\(other), \(plain)", "\(other);q=0.5, \(plain);q=0.5"] {
            #expect(!AcceptedForm.prefers(other, over: plain, accept: accept), "\(accept)")
        }
    }

    @Test("the stream: SSE carries either form, so naming CloudEvents beside text/event-stream asks for them")
    func streamTie() {
        let (other, plain) = ("application/cloudevents+json", "text/event-stream")
        #expect(AcceptedForm.prefers(other, over: plain, accept: "\(plain), \(other)", winsTies: true))
        #expect(!AcceptedForm.prefers(other, over: plain, accept: plain, winsTies: true))
        #expect(!AcceptedForm.prefers(other, over: plain, accept: "\(plain), \(other);q=0.5", winsTies: true))
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
