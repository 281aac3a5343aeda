import ArgumentParser
import Foundation
import LedgerApp
import LedgerWorkers

extension DevCommand {
    /// `ledger dev messages`: the emails and texts development mode sent (instead of sending
    /// them), from `DevelopmentFiles.messages`; with `--field`, one value of the newest, for
    /// scripts (`TOKEN=$(ledger dev messages --to ana@example.com --field token)`).
    struct Messages: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "messages",
            abstract: "List the emails and texts a development-mode service sent, or print one field of the newest.")

        @Option(help: "Only those to this address or number.") var to: String?
        @Option(help: "Only this template (verify_email, otp, password_reset, reauth_link, …).") var template: String?
        @Option(help: "Print only this field of the newest match: code, link or token.") var field: Field?
        @Option(help: "With --field, seconds to wait for a match to arrive (messages go out just after the call).")
        var wait = 10
        @Option(help: "The file development mode writes.") var file = DevelopmentFiles.messages

        enum Field: String, ExpressibleByArgument, CaseIterable { case code, link, token }

        func run() async throws {
            guard let field else {
                let found = DevelopmentMessageFile.messages(at: file).filter { $0.matches(to: to, template: template) }
                for message in found {
                    print(
                        [message.sentAt, message.channel, message.template, message.to, message.code ?? message.link ?? "-"].joined(
                            separator: "  "))
                }
                if found.isEmpty { FileHandle.standardError.write(Data("no messages in \(file)\n".utf8)) }
                return
            }
            let deadline = Date().addingTimeInterval(Double(max(wait, 0)))
            while true {
                let newest = DevelopmentMessageFile.messages(at: file).last { $0.matches(to: to, template: template) }
                let value: String? =
                    switch field {
                    case .code: newest?.code
                    case .link: newest?.link
                    case .token: newest?.token
                    }
                if let value {
                    print(value)
                    return
                }
                guard Date() < deadline else {
                    FileHandle.standardError.write(Data("ledger: no message with a \(field.rawValue) in \(file) matches\n".utf8))
                    throw ExitCode.failure
                }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }
}
