import Foundation
import HummingbirdOTP
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// RFC 6238 codes (SHA-1, 6 digits, 30 s steps) through HummingbirdOTP: new secrets, the
/// `otpauth://` URI an authenticator app scans, and which time step a code belongs to.
public enum TOTPCodes {
    static let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789")

    /// A new secret: 32 characters drawn uniformly (about 180 bits); its UTF-8 bytes are the HMAC key.
    public static func newSecret() throws -> String {
        try SecureRandom.string(32, from: alphabet)
    }

    /// The secret as authenticator apps take it typed in: base32 of its key bytes, no padding.
    public static func base32(_ secret: String) -> String {
        let uri = TOTP(secret: secret).createAuthenticatorURL(label: "x")
        return URLComponents(string: uri)?.queryItems?.first { $0.name == "secret" }?.value ?? ""
    }

    /// The secret behind its base32 form (what `base32` printed, any case, spaces allowed); nil
    /// when it is not base32 of a secret.
    public static func secret(fromBase32 text: String) -> String? {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bits = 0
        var value = 0
        var bytes: [UInt8] = []
        for character in text.uppercased() where character != " " && character != "=" {
            guard let index = alphabet.firstIndex(of: character) else { return nil }
            value = (value << 5) | index
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8((value >> bits) & 0xFF))
            }
        }
        return String(bytes: bytes, encoding: .utf8)
    }

    /// The URI a QR code carries: `otpauth://totp/ISSUER:LABEL?secret=…&issuer=ISSUER`.
    public static func uri(_ secret: String, label: String, issuer: String) -> String {
        TOTP(secret: secret).createAuthenticatorURL(label: "\(issuer):\(label)", issuer: issuer)
    }

    /// The time step `now` falls in.
    public static func step(at now: Date, policy: Policies = .standard) -> Int64 {
        Int64((now.timeIntervalSince1970 / policy.totpStep).rounded(.down))
    }

    /// The code of one time step.
    public static func code(_ secret: String, step: Int64, policy: Policies = .standard) -> String {
        let value = TOTP(secret: secret, timeStep: Int(policy.totpStep)).compute(
            date: Date(timeIntervalSince1970: Double(step) * policy.totpStep))
        let digits = String(value)
        return String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    /// The time step within one step of `now` whose code `presented` is, compared in constant
    /// time; nil when none. (Whether that step was used already is the account's to say.)
    public static func matchingStep(_ presented: String, secret: String, at now: Date, policy: Policies = .standard) -> Int64? {
        let trimmed = presented.filter { !$0.isWhitespace }
        guard trimmed.count == 6, trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let current = step(at: now, policy: policy)
        var matched: Int64?
        // Every candidate is compared, so the time taken does not say which one matched.
        for candidate in (current - policy.totpDriftSteps)...(current + policy.totpDriftSteps) {
            if ConstantTime.equals(Array(code(secret, step: candidate, policy: policy).utf8), Array(trimmed.utf8)) {
                matched = max(matched ?? candidate, candidate)
            }
        }
        return matched
    }
}
