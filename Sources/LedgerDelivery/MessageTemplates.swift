import Foundation
import LedgerAccounts
import Mustache

/// The messages as people read them: swift-mustache templates for every email (subject, plain
/// text, HTML in one shared, accessible layout) and every SMS, built in in English, Georgian and Russian
/// (`Resources/templates`) and overridable file by file from a folder (`LEDGER_TEMPLATES_DIR`),
/// in the locale the account last used.
///
/// Files are `NAME.PART.mustache` (PART `subject`, `text`, `html` or `sms`) and, for a locale,
/// `NAME.LOCALE.PART.mustache`. A message in `en-GB` takes, file by file, the first of
/// `NAME.en-GB.PART`, `NAME.en.PART`, then `NAME.PART`; at each step the override folder's file
/// before a built-in one. The partials (`layout.html`, `footer.text`, or any an override
/// includes) are chosen the same way. The fields are listed in `MessageTemplates+Fields.swift`
/// and in `Resources/templates/README.md`.
///
/// Every file is parsed at start, so a broken override stops `serve` before a message is lost;
/// rendering throws `TemplateError` (naming the file, never the code or link) when a file is
/// missing or shows a field the message lacks.
public struct MessageTemplates: MessageRendering {
    /// Where built-in files come from, in errors.
    public static let builtInOrigin = "built-in"

    public let brand: MessageBrand
    /// Where people write for help (`LEDGER_SUPPORT_EMAIL`).
    public let supportEmail: String
    /// How long codes and links work, as the messages say.
    public let lifetimes: MessageLifetimes
    /// The built-in files and the overrides, by lower-cased name without `.mustache`
    /// (`verify_email.ka.html`): names are matched without regard to case.
    let builtIn: [String: TemplateFile]
    let overrides: [String: TemplateFile]

    /// Loads the built-in templates and, when `overridesDirectory` is given, every
    /// `*.mustache` file in it; throws `TemplateError` for a file that does not parse or a folder
    /// that cannot be read.
    public init(
        brand: MessageBrand, supportEmail: String = "support@321.fit", lifetimes: MessageLifetimes = MessageLifetimes(),
        overridesDirectory: String? = nil
    ) throws {
        self.brand = brand
        self.supportEmail = supportEmail
        self.lifetimes = lifetimes
        guard let directory = Bundle.module.url(forResource: "templates", withExtension: nil) else {
            throw TemplateError(file: "Resources/templates", origin: Self.builtInOrigin, reason: .missing)
        }
        builtIn = try Self.load(directory, origin: Self.builtInOrigin)
        overrides = try overridesDirectory.map { try Self.load(URL(fileURLWithPath: $0), origin: $0) } ?? [:]
    }

    /// The default brand and support address, with the built-in templates only.
    public init() throws {
        try self.init(brand: MessageBrand())
    }

    /// Every `*.mustache` file in `directory` (not its subfolders), parsed. A file that is a
    /// symbolic link leading out of the folder is refused: the folder is what the operator
    /// vouches for, and a link to `/etc/…` or a secret would put that file in every message.
    static func load(_ directory: URL, origin: String) throws -> [String: TemplateFile] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw TemplateError(file: directory.path, origin: origin, reason: .invalid("the folder cannot be read"))
        }
        guard let folder = realPath(directory.path) else {
            throw TemplateError(file: directory.path, origin: origin, reason: .invalid("the folder cannot be read"))
        }
        var files: [String: TemplateFile] = [:]
        for name in names.sorted() where name.hasSuffix(".mustache") && !name.hasPrefix(".") {
            let url = directory.appendingPathComponent(name)
            guard let target = realPath(url.path), target.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/") else {
                throw TemplateError(file: name, origin: origin, reason: .invalid("a link to a file outside the folder"))
            }
            guard let bytes = readRegularFile(target, limit: 256 * 1024), let text = String(validating: bytes, as: UTF8.self) else {
                throw TemplateError(file: name, origin: origin, reason: .invalid("not a readable UTF-8 file of at most 256 KiB"))
            }
            let key = String(name.dropLast(".mustache".count)).lowercased()
            files[key] = try TemplateFile(name: name, origin: origin, text: text, html: key.hasSuffix(".html"))
        }
        return files
    }

    /// The bytes of the regular file at `path` (opened without following a link, and without
    /// waiting on a FIFO), when it has at most `limit`; nil for anything else. A FIFO or a
    /// device named `*.mustache` would otherwise hang the start or be read without end.
    static func readRegularFile(_ path: String, limit: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, Int(status.st_size) <= limit else { return nil }
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var count = 0
        while count <= limit {
            let read = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, limit + 1 - count) }
            if read < 0 && errno == EINTR { continue }
            guard read >= 0 else { return nil }
            if read == 0 { break }
            count += read
        }
        return count <= limit ? Array(bytes.prefix(count)) : nil
    }

    /// The path with every symbolic link resolved; nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    // MARK: Rendering

    public func email(_ message: OutboxMessage) throws -> RenderedEmail {
        let locales = Self.localeCandidates(message.locale)
        let subjectFile = try file(message.template, "subject", locales)
        try checkLink(message, file: subjectFile.file)
        let subject = Self.oneLine(try render(subjectFile, part: "subject", fields: fields(for: message, in: subjectFile.locale)))
        guard !subject.isEmpty else { throw TemplateError(file: subjectFile.file.name, origin: subjectFile.file.origin, reason: .empty) }
        let textFile = try file(message.template, "text", locales)
        let text = try render(textFile, part: "text", fields: fields(for: message, in: textFile.locale))
        let htmlFile = try file(message.template, "html", locales)
        var fields = fields(for: message, in: htmlFile.locale)
        // The page's language is the file's, not the message's: English when no file of its locale exists.
        fields["lang"] = htmlFile.locale.map(Self.languageTag) ?? "en"
        let html = try render(htmlFile, part: "html", fields: fields)
        return RenderedEmail(subject: subject, text: Self.trimmedBody(text), html: Self.trimmedBody(html))
    }

    public func sms(_ message: OutboxMessage) throws -> String {
        let locales = Self.localeCandidates(message.locale)
        let (smsFile, smsLocale) = try file(message.template, "sms", locales)
        try checkLink(message, file: smsFile)
        let text = try render((smsFile, smsLocale), part: "sms", fields: fields(for: message, in: smsLocale))
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw TemplateError(file: smsFile.name, origin: smsFile.origin, reason: .empty) }
        return text
    }

    /// Whether `template` has an email (a subject file) and an SMS, overridden or built in.
    public func channels(of template: String) -> [OutboxMessage.Channel] {
        let key = template.lowercased()
        let has = { (part: String) in
            [self.overrides, self.builtIn].contains { files in files.keys.contains { $0.hasPrefix(key + ".") && $0.hasSuffix("." + part) } }
        }
        return (has("subject") ? [.email] : []) + (has("sms") ? [.sms] : [])
    }

    /// The file for `name` and `part` in the first of `locales` that has one, else unlocalised;
    /// with the locale it is in (nil: unlocalised, English when built in).
    func file(_ name: String, _ part: String, _ locales: [String]) throws -> (file: TemplateFile, locale: String?) {
        let name = name.lowercased()
        for locale in locales {
            if let found = overrides["\(name).\(locale).\(part)"] ?? builtIn["\(name).\(locale).\(part)"] { return (found, locale) }
        }
        if let found = overrides["\(name).\(part)"] ?? builtIn["\(name).\(part)"] { return (found, nil) }
        throw TemplateError(
            file: "\(name).\(part).mustache", origin: overrides.isEmpty ? Self.builtInOrigin : "overridden or built-in", reason: .missing)
    }

    /// Renders `chosen` with the partials it includes (and theirs), each chosen for the file's
    /// own locale (an unlocalised, English file takes the unlocalised layout and footer: an
    /// English email has no Georgian footer); throws when one of them shows a field `fields` lacks.
    func render(_ chosen: (file: TemplateFile, locale: String?), part: String, fields: [String: Any]) throws -> String {
        let file = chosen.file
        let locales = chosen.locale.map(Self.localeCandidates) ?? []
        var included: [String: TemplateFile] = [:]
        var pending = Array(file.partials)
        while let partial = pending.popLast() {
            guard included[partial] == nil else { continue }
            let found = try self.file(partial, part, locales).file
            included[partial] = found
            pending += found.partials
        }
        for each in [file] + included.values {
            if let missing = each.requiredFields.sorted().first(where: { fields[$0] == nil }) {
                throw TemplateError(file: each.name, origin: each.origin, reason: .missingField(missing))
            }
        }
        return file.template.render(fields, library: MustacheLibrary(templates: included.mapValues(\.template)))
    }

    /// A link goes into an `href` as it is (never rewritten or tracked), so it must be http(s):
    /// `javascript:` in a misconfigured link base would otherwise run in a webmail.
    func checkLink(_ message: OutboxMessage, file: TemplateFile) throws {
        guard let link = message.link else { return }
        let lower = link.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else {
            throw TemplateError(file: file.name, origin: file.origin, reason: .unsafeLink)
        }
    }

    // MARK: Locales and text

    /// The locales to try for `locale`, most specific first, lower-cased: `en-GB` → `en-gb`,
    /// `en`. Empty for anything that is not a language tag (only letters, digits and hyphens).
    static func localeCandidates(_ locale: String) -> [String] {
        let cleaned = locale.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "-").lowercased()
        guard cleaned.count <= 35, cleaned.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else { return [] }
        let subtags = cleaned.split(separator: "-")
        return (0..<subtags.count).reversed().map { subtags[...$0].joined(separator: "-") }
    }

    /// A lower-cased candidate as BCP 47 writes it, for `<html lang>`: `en-gb` → `en-GB`,
    /// `zh-hant` → `zh-Hant`.
    static func languageTag(_ locale: String) -> String {
        locale.split(separator: "-").enumerated().map { index, subtag in
            guard index > 0 else { return String(subtag) }
            if subtag.count == 4, subtag.allSatisfy(\.isLetter) { return subtag.prefix(1).uppercased() + subtag.dropFirst() }
            if subtag.count == 2 { return subtag.uppercased() }
            return String(subtag)
        }.joined(separator: "-")
    }

    /// A subject on one line: a line break in a header would end it (and start another).
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// A body without the blank lines a template's tags leave at its ends, ending in one newline.
    static func trimmedBody(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespacesAndNewlines) + "\n"
    }
}
