import Foundation

extension MessageTemplates {
    /// An override without a locale (`otp.sms.mustache`) that built-in files in a language
    /// come before (`otp.ka.sms`, `otp.ru.sms`): messages in those languages do not show it.
    public struct ShadowedOverride: Sendable, Equatable {
        /// The override's file name.
        public let file: String
        /// The built-in files that are used instead, by language.
        public let builtIn: [String]
    }

    /// Every override without a locale that built-in localised files shadow, for `serve` to
    /// warn about at start (an operator's SMS with an app hash, or a layout with a legal
    /// footer, would otherwise silently not reach Georgian and Russian readers). Adding
    /// `NAME.ka.PART.mustache` and `NAME.ru.PART.mustache` overrides takes the warning away.
    public var shadowedOverrides: [ShadowedOverride] {
        overrides.values.compactMap { override -> ShadowedOverride? in
            let key = String(override.name.dropLast(".mustache".count)).lowercased()
            let parts = key.split(separator: ".")
            guard parts.count == 2 else { return nil }
            let shadows = builtIn.keys.filter { builtInKey in
                let pieces = builtInKey.split(separator: ".")
                return pieces.count == 3 && pieces[0] == parts[0] && pieces[2] == parts[1]
                    && overrides["\(pieces[0]).\(pieces[1]).\(pieces[2])"] == nil
            }
            return shadows.isEmpty ? nil : ShadowedOverride(file: override.name, builtIn: shadows.sorted().map { $0 + ".mustache" })
        }.sorted { $0.file < $1.file }
    }
}
