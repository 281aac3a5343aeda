import ArgumentParser
import Foundation
import LedgerAccounts
import LedgerApp
import LedgerDelivery
import LedgerServer

/// `ledger templates preview NAME`: a message template rendered with sample fields, as the
/// service would send it with this environment's `LEDGER_TEMPLATES_DIR` and `LEDGER_BRAND_*`, so
/// an operator sees an override or a translation before a person does.
struct TemplatesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "templates", abstract: "Preview the email and SMS templates.", subcommands: [Preview.self])

    struct Preview: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Render a template with a sample code, link, device and time.",
            discussion: """
                Prints an email's subject and plain text, or an SMS with its length; --html writes the \
                email's HTML to a file instead. Templates: \(MessageTemplates.catalog.keys.sorted().joined(separator: ", ")).
                """)

        @Argument(help: "The template, such as verify_email or otp.")
        var name: String

        @Option(help: "The locale to render in, such as ka or en-GB (falls back to its language, then English).")
        var locale = "en"

        @Option(name: .customLong("html"), help: "Write the email's HTML to this file.")
        var htmlFile: String?

        @Option(help: "A folder of override templates (default: LEDGER_TEMPLATES_DIR).")
        var templatesDir: String?

        @Flag(help: "Render the SMS of a template that goes by email and by SMS.")
        var sms = false

        func run() throws {
            var environment = ProcessInfo.processInfo.environment
            if let templatesDir { environment["LEDGER_TEMPLATES_DIR"] = templatesDir }
            let templates = try LedgerConfiguration.fromEnvironment(environment).messageTemplates()
            let channels = templates.channels(of: name)
            guard !channels.isEmpty else {
                throw ValidationError("no template \(name) (built in: \(MessageTemplates.catalog.keys.sorted().joined(separator: ", ")))")
            }
            let asSMS = sms || !channels.contains(.email)
            if asSMS {
                guard channels.contains(.sms) else { throw ValidationError("\(name) has no SMS (\(name).sms.mustache)") }
                guard htmlFile == nil else { throw ValidationError("an SMS has no HTML") }
                let text = try templates.sms(MessageTemplates.sample(name, channel: .sms, locale: locale))
                print(text)
                let length = GSM7.length(text).map { "\($0) GSM-7 characters" } ?? "\(text.utf16.count) UCS-2 characters"
                FileHandle.standardError.write(Data("(\(length), \(GSM7.segments(text)) segment(s))\n".utf8))
                return
            }
            let email = try templates.email(MessageTemplates.sample(name, channel: .email, locale: locale))
            if let htmlFile {
                try Data(email.html.utf8).write(to: URL(fileURLWithPath: htmlFile))
                FileHandle.standardError.write(Data("wrote \(htmlFile) (\(email.subject))\n".utf8))
            } else {
                print("Subject: \(email.subject)\n")
                print(email.text, terminator: "")
            }
        }
    }
}
