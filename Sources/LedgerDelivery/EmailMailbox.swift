import Foundation

/// A mailbox as it goes in `From`, `To` and `Reply-To`: an address and, maybe, a display name
/// (`321Fit <no-reply@321.fit>`).
///
/// Built only through `init(address:displayName:)` or `parse(_:)`, so it can never carry a line
/// break into a header: an address with a control character, a space or any of `<>()[],;:"\`
/// is refused, and a display name's control characters (CR and LF among them) become spaces.
public struct EmailMailbox: Sendable, Equatable, CustomStringConvertible {
    public let address: String
    public let displayName: String?

    /// Refuses an address that cannot go safely into an SMTP envelope and a header.
    public init(address: String, displayName: String? = nil) throws {
        guard Self.isValid(address) else { throw EmailMailboxError() }
        self.address = address
        let name = displayName.map(MIMEMessage.headerText) ?? ""
        self.displayName = name.isEmpty ? nil : name
    }

    /// `Name <address>`, `"Quoted, Name" <address>`, `<address>` or a bare `address`, as
    /// `LEDGER_EMAIL_FROM` and `LEDGER_SUPPORT_EMAIL` are written.
    public static func parse(_ text: String) throws -> EmailMailbox {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") else {
            return try EmailMailbox(address: trimmed)
        }
        let address = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
        var name = trimmed[..<open].trimmingCharacters(in: .whitespaces)
        if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") {
            var unquoted = ""
            var escaped = false
            for character in name.dropFirst().dropLast() {
                if !escaped && character == "\\" {
                    escaped = true
                    continue
                }
                escaped = false
                unquoted.append(character)
            }
            name = unquoted
        }
        return try EmailMailbox(address: address, displayName: name)
    }

    /// The part after the `@`: where `Message-ID`s of this sender are made.
    public var domain: String {
        String(address[address.index(after: address.lastIndex(of: "@")!)...])
    }

    /// The mailbox as a person reads it (not header-encoded).
    public var description: String {
        displayName.map { "\($0) <\(address)>" } ?? address
    }

    /// One `@`, both sides non-empty, at most 254 bytes (RFC 5321), and nothing that could end
    /// or restructure a header or an SMTP command. Non-ASCII letters pass (libcurl converts the
    /// domain with IDN and uses SMTPUTF8 where the relay offers it), as the accounts accept them.
    static func isValid(_ address: String) -> Bool {
        guard address.utf8.count <= 254 else { return false }
        let forbidden = Set("<>()[],;:\"\\".unicodeScalars)
        guard
            !address.unicodeScalars.contains(where: {
                $0.properties.generalCategory == .control || $0.properties.isWhitespace || forbidden.contains($0)
                    || $0.properties.generalCategory == .lineSeparator || $0.properties.generalCategory == .paragraphSeparator
            })
        else { return false }
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64, !parts[1].isEmpty else { return false }
        guard !parts[1].hasPrefix("."), !parts[1].hasSuffix("."), !parts[1].contains("..") else { return false }
        return true
    }
}

/// An address that cannot be sent to. It names no address: the address may be a recipient's.
public struct EmailMailboxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String { "not an email address that can go into a message header and an SMTP envelope" }
}
