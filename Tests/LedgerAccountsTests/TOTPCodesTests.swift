import Foundation
import LedgerAccounts
import LedgerIdentity
import Testing

@Suite("TOTP codes (RFC 6238) and recovery codes")
struct TOTPCodesTests {
    /// RFC 6238's SHA-1 key and test times; its 8-digit values end in these 6 digits.
    static let rfcSecret = "12345678901234567890"

    @Test("RFC 6238 test vectors, 6 digits")
    func vectors() {
        let expected: [(Double, String)] = [
            (59, "287082"), (1_111_111_109, "081804"), (1_234_567_890, "005924"), (2_000_000_000, "279037"),
        ]
        for (time, code) in expected {
            #expect(TOTPCodes.code(Self.rfcSecret, step: TOTPCodes.step(at: Date(timeIntervalSince1970: time))) == code)
        }
    }

    @Test("a code is accepted one step either side of now, not two")
    func drift() {
        let now = Date(timeIntervalSince1970: 1_790_000_015)
        let step = TOTPCodes.step(at: now)
        for delta: Int64 in [-1, 0, 1] {
            #expect(
                TOTPCodes.matchingStep(TOTPCodes.code(Self.rfcSecret, step: step + delta), secret: Self.rfcSecret, at: now) == step + delta)
        }
        for delta: Int64 in [-2, 2] {
            #expect(TOTPCodes.matchingStep(TOTPCodes.code(Self.rfcSecret, step: step + delta), secret: Self.rfcSecret, at: now) == nil)
        }
        #expect(TOTPCodes.matchingStep("12a456", secret: Self.rfcSecret, at: now) == nil)
    }

    @Test("new secrets differ, and their base32 form (what people type) gives them back")
    func secrets() throws {
        let secret = try TOTPCodes.newSecret()
        let other = try TOTPCodes.newSecret()
        #expect(secret.count == 32 && other != secret)
        #expect(TOTPCodes.secret(fromBase32: TOTPCodes.base32(secret)) == secret)
        #expect(TOTPCodes.secret(fromBase32: TOTPCodes.base32(secret).lowercased()) == secret)
        #expect(TOTPCodes.uri(secret, label: "ana@example.com", issuer: "321Fit").hasPrefix("otpauth://totp/321Fit"))
    }

    @Test("recovery codes: ten distinct, hashed as typed in any case and with or without dashes")
    func recovery() throws {
        let (codes, hashes) = try RecoveryCodes.generate(count: Policies.standard.recoveryCodeCount)
        #expect(codes.count == 10 && Set(codes).count == 10 && hashes.count == 10)
        #expect(RecoveryCodes.hash(codes[0].uppercased().replacingOccurrences(of: "-", with: "")) == hashes[0])
        #expect(!hashes.contains(codes[0]))
    }
}
