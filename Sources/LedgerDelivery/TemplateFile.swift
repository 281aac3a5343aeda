import Mustache

/// One template file, parsed once at start, with what rendering it needs: the fields it shows
/// outside any section (which the message must have) and the partials it includes.
struct TemplateFile: Sendable {
    /// The file's name, such as `verify_email.ka.html.mustache`.
    let name: String
    /// `built-in`, or the override folder.
    let origin: String
    let template: MustacheTemplate
    /// Fields shown unconditionally: `{{code}}` outside any `{{#…}}` or `{{^…}}`.
    let requiredFields: Set<String>
    /// Partials and parents it includes (`{{> footer}}`, `{{< layout}}`).
    let partials: Set<String>

    /// Parses `text`; `html` false renders it as text (no escaping: a subject, a plain-text body
    /// or an SMS is not HTML, and `&amp;` there would be a bug).
    init(name: String, origin: String, text: String, html: Bool) throws(TemplateError) {
        self.name = name
        self.origin = origin
        do {
            // The pragma goes first without a newline, so the parser's line numbers stay the file's.
            template = try MustacheTemplate(string: html ? text : "{{% CONTENT_TYPE: TEXT}}" + text)
        } catch let error as MustacheTemplate.ParserError {
            throw TemplateError(
                file: name, origin: origin, reason: .invalid("line \(error.context.lineNumber): \(error.error)"))
        } catch {
            throw TemplateError(file: name, origin: origin, reason: .invalid("\(error)"))
        }
        (requiredFields, partials) = Self.scan(text)
    }

    /// The tags of `text`, read as far as a delimiter change (`{{=<% %>=}}`), after which nothing
    /// more is required: a section's fields are optional, since the section shows only when its
    /// field is there.
    static func scan(_ text: String) -> (fields: Set<String>, partials: Set<String>) {
        var fields: Set<String> = []
        var partials: Set<String> = []
        // Openers in force: true for a section (`#`, `^`), false for a block or parent (`$`, `<`).
        var open: [Bool] = []
        var rest = Substring(text)
        while let start = rest.range(of: "{{") {
            let triple = rest[start.upperBound...].hasPrefix("{")
            let close = triple ? "}}}" : "}}"
            let from = triple ? rest.index(after: start.upperBound) : start.upperBound
            guard let end = rest[from...].range(of: close) else { break }
            let tag = rest[from..<end.lowerBound].trimmingCharacters(in: .whitespaces)
            rest = rest[end.upperBound...]
            guard let sigil = tag.first else { continue }
            let body = tag.dropFirst().trimmingCharacters(in: .whitespaces)
            switch sigil {
            case "#", "^": open.append(true)
            case "$": open.append(false)
            case "<":
                open.append(false)
                partials.insert(body)
            case "/": _ = open.popLast()
            case ">": partials.insert(body)
            case "!", "%": continue
            case "=": return (fields, partials)
            default:
                guard !open.contains(true) else { continue }
                let name = Self.fieldName(triple || sigil != "&" ? tag : body)
                if !name.isEmpty, name != "." { fields.insert(name) }
            }
        }
        return (fields, partials)
    }

    /// The context field a variable tag reads: `a` of `a.b`, `x` of a transform `upper(x)`.
    static func fieldName(_ tag: String) -> String {
        var name = Substring(tag)
        if let open = name.lastIndex(of: "("), let close = name[open...].firstIndex(of: ")") {
            name = name[name.index(after: open)..<close]
        }
        if name == "." { return "." }
        return String(name.split(separator: ".", maxSplits: 1).first ?? "").trimmingCharacters(in: .whitespaces)
    }
}
