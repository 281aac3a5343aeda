/// A message template that cannot make its message: it names the file (and where it came
/// from), never the message's code, link or recipient, so it may be logged and listed
/// (`ledger deliveries list --failed`) as it is.
public struct TemplateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the file.
    public enum Reason: Sendable, Equatable {
        /// No file for the template and part, in any locale tried, overridden or built in.
        case missing
        /// The file is not valid Mustache (where the parser stopped), or cannot be read.
        case invalid(String)
        /// The file shows a field, outside any section, that the message does not have (an
        /// otp text without its code, a misspelt name in an override).
        case missingField(String)
        /// The message's link is not an http(s) URL, so no template may show it.
        case unsafeLink
        /// The file rendered nothing (a subject or an SMS must say something).
        case empty
    }

    /// The file, such as `verify_email.ka.html.mustache`.
    public let file: String
    /// Where the file is: `built-in`, or the `LEDGER_TEMPLATES_DIR` folder.
    public let origin: String
    public let reason: Reason

    public init(file: String, origin: String, reason: Reason) {
        self.file = file
        self.origin = origin
        self.reason = reason
    }

    public var description: String {
        let what =
            switch reason {
            case .missing: "is missing"
            case .invalid(let why): "is not a valid template (\(why))"
            case .missingField(let field): "shows the field \(field), which the message does not have"
            case .unsafeLink: "would show a link that is not http(s)"
            case .empty: "renders empty"
            }
        return "message template \(file) (\(origin)) \(what)"
    }
}
