import Foundation

/// The backend-authoritative password rules (docs/architecture.md "Accounts and sessions";
/// "Password rule codes"). Every broken rule is reported, not only the first.
public struct PasswordPolicy: Sendable {
    /// One broken rule, with the product copy.
    public struct Violation: Sendable, Hashable {
        public let code: String
        public let message: String

        public static let tooShort = Violation(code: "too_short", message: "Password must be at least 8 characters.")
        public static let tooCommon = Violation(code: "too_common", message: "Not a common password")
        public static let allDigits = Violation(code: "all_digits", message: "Not all numbers")
        /// The product spec gives no copy for this rule (it is server-side only); this is ours.
        public static let similarToEmail = Violation(code: "similar_to_email", message: "Too similar to your email address.")
        public static let sameAsCurrent = Violation(
            code: "same_as_current", message: "Pick something different from your current password.")
    }

    public static let minimumLength = 8
    /// Django's `UserAttributeSimilarityValidator` threshold.
    static let maximumSimilarity = 0.7

    let commonPasswords: Set<String>

    public init(commonPasswords: Set<String>) {
        self.commonPasswords = commonPasswords
    }

    /// The policy with the bundled common-password list.
    public static let standard = PasswordPolicy(commonPasswords: CommonPasswords.load())

    /// The rules `password` breaks. `isCurrentPassword` is asked only when every other rule
    /// passes, since it costs a password hash.
    public func violations(
        of password: String, email: EmailAddress?, isCurrentPassword: (() -> Bool)? = nil
    ) -> [Violation] {
        var found: [Violation] = []
        if password.count < Self.minimumLength { found.append(.tooShort) }
        if commonPasswords.contains(password.lowercased()) { found.append(.tooCommon) }
        if !password.isEmpty && password.allSatisfy({ $0.isASCII && $0.isNumber }) { found.append(.allDigits) }
        if let email, Self.isSimilar(password, to: email) { found.append(.similarToEmail) }
        if found.isEmpty, let isCurrentPassword, isCurrentPassword() { found.append(.sameAsCurrent) }
        return found
    }

    /// Similar when the password and the email's local part (or one of its words of three or
    /// more characters) contain each other, or match by the ratio of their longest common
    /// subsequence at 0.7 or more.
    static func isSimilar(_ password: String, to email: EmailAddress) -> Bool {
        let candidate = password.lowercased()
        let local = email.localPart
        let words = [local] + local.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init)
        for word in Set(words) where word.count >= 3 {
            if candidate.contains(word) || (candidate.count >= 3 && word.contains(candidate)) { return true }
            if similarity(candidate, word) >= maximumSimilarity { return true }
        }
        return false
    }

    /// `2·LCS / (|a| + |b|)`, like difflib's ratio for short strings.
    static func similarity(_ a: String, _ b: String) -> Double {
        let left = Array(a)
        let right = Array(b)
        guard !left.isEmpty || !right.isEmpty else { return 1 }
        var previous = [Int](repeating: 0, count: right.count + 1)
        for i in 1...max(left.count, 1) where !left.isEmpty {
            var current = [Int](repeating: 0, count: right.count + 1)
            for j in stride(from: 1, through: right.count, by: 1) {
                current[j] = left[i - 1] == right[j - 1] ? previous[j - 1] + 1 : max(previous[j], current[j - 1])
            }
            previous = current
        }
        return 2 * Double(previous[right.count]) / Double(left.count + right.count)
    }
}

/// The bundled list of common passwords (see `Resources/ATTRIBUTION.md`).
enum CommonPasswords {
    static func load() -> Set<String> {
        guard let url = Bundle.module.url(forResource: "common-passwords", withExtension: "txt"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else { return [] }
        return Set(text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty })
    }
}
