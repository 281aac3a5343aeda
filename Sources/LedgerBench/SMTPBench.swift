import ArgumentParser
import Foundation
import LedgerAccounts
import LedgerCore
import LedgerDelivery

/// `ledger-bench smtp`: emails per second through an SMTP relay with the service's own sink
/// (`SMTPDeliverySink`: rendering, MIME, libcurl on its thread pool), at N connections. Each of
/// N workers sends its share one message after another, so the pool holds N connections; the
/// time includes opening them (TLS and AUTH), as a burst after a quiet spell would.
struct SMTPBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "smtp", abstract: "Emails/s through an SMTP relay (LEDGER_SMTP_URL) at N connections.")

    @Option(help: "The relay (default: $LEDGER_SMTP_URL).") var url: String?
    @Option(help: "PEM the relay's certificate must chain to (default: $LEDGER_SMTP_CA_FILE).") var caFile: String?
    @Option(help: "Connections (and concurrent senders).") var connections = 1
    @Option(help: "Emails to send.") var messages = 500

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let url = url ?? environment["LEDGER_SMTP_URL"] else { throw ValidationError("set LEDGER_SMTP_URL (or --url)") }
        var configuration = try SMTPConfiguration.parse(url: url, caFile: caFile ?? environment["LEDGER_SMTP_CA_FILE"])
        configuration.maximumConnections = connections
        let sink = try SMTPDeliverySink(configuration: configuration, renderer: BenchEmailRenderer())
        let workers = connections
        let total = messages
        let started = ContinuousClock.now
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<workers {
                    group.addTask {
                        for index in stride(from: worker, to: total, by: workers) {
                            try await sink.deliver(
                                OutboxMessage(
                                    channel: .email, to: "bench\(index)@example.org", template: "verify_email",
                                    code: String(format: "%06d", index % 1_000_000), link: "https://321.fit/verify?token=bench-\(index)"))
                        }
                    }
                }
                try await group.waitForAll()
            }
        } catch {
            await sink.shutdown()
            throw error
        }
        let elapsed = (ContinuousClock.now - started).inSeconds
        let opened = sink.connectionsOpened
        await sink.shutdown()
        // The size of one message as it went (the Python loop beside it prints its own).
        let sample = try BenchEmailRenderer().email(
            OutboxMessage(
                channel: .email, to: "bench0@example.org", template: "verify_email", code: "000000",
                link: "https://321.fit/verify?token=bench-0"))
        let bytes = MIMEMessage(
            from: sink.from, to: try EmailMailbox(address: "bench0@example.org"), replyTo: sink.replyTo, subject: sample.subject,
            text: sample.text, html: sample.html
        ).encoded().count
        print(
            String(
                format: "bench smtp client=ledger connections=%d messages=%d seconds=%.2f emails_per_s=%.1f"
                    + " connections_opened=%d message_bytes=%d peak_rss_mib=%.1f",
                connections, total, elapsed, Double(total) / elapsed, opened, bytes, peakRSSMiB()))
    }
}

/// A verification email of a real one's size (~0.5 KB of text, ~1.5 KB of HTML).
struct BenchEmailRenderer: MessageRendering {
    func email(_ message: OutboxMessage) throws -> RenderedEmail {
        let link = message.link ?? ""
        let code = message.code ?? ""
        return RenderedEmail(
            subject: "Bestätige deine E-Mail-Adresse für 321Fit",
            text: """
                Hallo!

                Dein Bestätigungscode lautet: \(code)

                Oder öffne diesen Link, um deine E-Mail-Adresse zu bestätigen:
                \(link)

                Der Link ist 24 Stunden gültig. Wenn du kein Konto bei 321Fit angelegt hast, kannst du
                diese E-Mail ignorieren; ohne Bestätigung wird nichts angelegt.

                Fragen? Antworte einfach auf diese E-Mail oder schreib an support@321.fit.

                — Dein 321Fit-Team
                """,
            html: """
                <!doctype html><html lang="de"><head><meta charset="utf-8"><title>Bestätige deine E-Mail-Adresse</title></head>
                <body style="margin:0;padding:0;background:#f4f4f5;font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif">
                <table role="presentation" width="100%" cellpadding="0" cellspacing="0"><tr><td align="center" style="padding:24px">
                <table role="presentation" width="560" cellpadding="0" cellspacing="0" style="background:#ffffff;border-radius:8px">
                <tr><td style="padding:32px;color:#18181b;font-size:16px;line-height:24px">
                <h1 style="font-size:22px;margin:0 0 16px">Bestätige deine E-Mail-Adresse</h1>
                <p>Dein Bestätigungscode lautet:</p><p style="font-size:28px;letter-spacing:4px;font-weight:bold">\(code)</p>
                <p><a href="\(link)"
                style="display:inline-block;background:#e11d48;color:#ffffff;padding:12px 20px;border-radius:6px;text-decoration:none">
                E-Mail-Adresse bestätigen</a></p>
                <p style="color:#52525b;font-size:14px">Der Link ist 24 Stunden gültig. Wenn du kein Konto bei 321Fit angelegt hast, kannst du diese E-Mail ignorieren.</p>
                </td></tr></table></td></tr></table></body></html>
                """)
    }

    func sms(_ message: OutboxMessage) throws -> String {
        "321Fit code: \(message.code ?? "")"
    }
}
