import Foundation
import LedgerWebAuthn

extension PublicKeyCredentialJSON {
    /// The response as a browser would POST it (`JSON.stringify(credential)`).
    public func jsonBytes() -> [UInt8] {
        // Encoding plain strings and numbers cannot fail.
        Array(try! JSONEncoder().encode(self))
    }
}
