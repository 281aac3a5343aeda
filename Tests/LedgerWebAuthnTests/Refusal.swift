import LedgerWebAuthn
import Testing

/// The code of the `WebAuthnError` that `body` throws, nil when it returns. Any other error is a failure.
func refusal(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> WebAuthnError.Code? {
    do {
        try body()
        return nil
    } catch let error as WebAuthnError {
        return error.code
    } catch {
        Issue.record("not a WebAuthnError: \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
