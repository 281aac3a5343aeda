import Foundation
import LedgerCrypto
import LedgerIdentity

/// The picture of an account without one (the seeds: "default is generated initials tile"):
/// up to two initials of the display name on a colour drawn from the user id, as SVG.
public struct InitialsTile: Sendable, Equatable {
    /// What the tile is drawn from.
    public struct Subject: Sendable, Equatable {
        public let accountID: UUID
        public let displayName: String?
        /// Used when there is no display name, unless the service gave it (`user_000042`).
        public let handle: String?
        public let handleIsTemporary: Bool

        public init(accountID: UUID, displayName: String?, handle: String?, handleIsTemporary: Bool) {
            self.accountID = accountID
            self.displayName = displayName
            self.handle = handle
            self.handleIsTemporary = handleIsTemporary
        }
    }

    /// One or two letters; empty when the account has no name to take them from (a silhouette is drawn).
    public let initials: String
    /// `#rrggbb`, one of `palette`.
    public let background: String

    /// Colours white text reads on (contrast 4.5:1 or more), told apart from one another.
    static let palette = [
        "#1565C0", "#2E7D32", "#AD1457", "#6A1B9A", "#C62828", "#00695C", "#4527A0", "#283593", "#BF360C", "#37474F", "#00838F",
        "#5D4037",
    ]

    public init(_ subject: Subject) {
        initials = Self.initials(of: subject.displayName ?? (subject.handleIsTemporary ? nil : subject.handle) ?? "")
        let digest = SHA256.hash(Array(PublicUserID(accountID: subject.accountID).description.utf8))
        background = Self.palette[Int(digest[0]) % Self.palette.count]
    }

    /// The first letter of the first word and of the last: Latin and Cyrillic upper-cased, Georgian as written.
    static func initials(of name: String) -> String {
        let words = name.split(whereSeparator: { $0.isWhitespace || $0 == "_" || $0 == "." || $0 == "-" })
            .compactMap { word in word.first { $0.isLetter || $0.isNumber } }
        guard let first = words.first else { return "" }
        let letters = words.count > 1 ? [first, words[words.count - 1]] : [first]
        // A letter with its accents, but not the thousands of combining marks a name can stack on one.
        let bounded = letters.map { $0.unicodeScalars.count > 4 ? Character($0.unicodeScalars.first!) : $0 }
        return bounded.map { Self.isGeorgian($0) ? String($0) : String($0).uppercased() }.joined()
    }

    /// Georgian (Mkhedruli) is written without capitals: a name starts with the same letter as any
    /// word. Unicode 11 made Mtavruli its upper case, which `uppercased()` would produce, but
    /// Mtavruli is only for whole words in all caps (headings, signs), never for an initial, and
    /// Unicode's title case of a Mkhedruli letter is the letter itself: a Georgian initial stays.
    static func isGeorgian(_ letter: Character) -> Bool {
        letter.unicodeScalars.first.map { (0x10A0...0x10FF).contains($0.value) || (0x2D00...0x2D2F).contains($0.value) } ?? false
    }

    /// The tile as an SVG document: a square of `side` pixels, nothing in it but shapes and the
    /// escaped initials (no script, no link, no external font or image).
    public func svg(side: Int = 128) -> String {
        let half = side / 2
        let content: String
        if initials.isEmpty {
            // A head and shoulders, for an account with no name yet.
            content = """
                <circle cx="\(half)" cy="\(side * 2 / 5)" r="\(side / 6)" fill="#ffffff"/>\
                <path d="M\(side / 5) \(side * 9 / 10)a\(side * 3 / 10) \(side / 4) 0 0 1 \(side * 3 / 5) 0z" fill="#ffffff"/>
                """
        } else {
            content = """
                <text x="50%" y="50%" dy=".35em" text-anchor="middle" fill="#ffffff" \
                font-family="system-ui, -apple-system, 'Segoe UI', Roboto, 'Noto Sans Georgian', sans-serif" \
                font-size="\(side * 2 / 5)" font-weight="600">\(Self.escaped(initials))</text>
                """
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(side)" height="\(side)" viewBox="0 0 \(side) \(side)">\
            <rect width="\(side)" height="\(side)" fill="\(background)"/>\(content)</svg>

            """
    }

    /// `text` for an XML text node.
    static func escaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
