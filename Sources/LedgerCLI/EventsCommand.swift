import ArgumentParser
import Foundation
import LedgerAccounts
import LedgerApp
import LedgerEventStore
import LedgerServer

/// `ledger events tail`: the commit-ordered feed as JSON lines, following new commits.
/// `ledger events catalog`: the event catalogue (docs/events.md) from the code.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "Read the event feed, or print the event catalogue.", subcommands: [Tail.self, Catalog.self])

    struct Catalog: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the event catalogue as Markdown (docs/events.md): types, fields, commands, what a purge leaves.")

        func run() {
            print(EventCatalog.markdown(), terminator: "")
        }
    }

    struct Tail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print events as JSON lines (as GET /events shows them), then follow new ones.")

        @OptionGroup var database: DatabaseOptions

        @Option(help: "Start after this cursor (default: only events committed from now on).")
        var after: String?

        @Flag(help: "Start from the first event.")
        var fromStart = false

        @Option(help: "Comma-separated event types to keep.")
        var types: String?

        @Option(help: "Stop after this many events.")
        var count: Int?

        @Flag(help: "Print what is there and stop instead of following.")
        var noFollow = false

        func run() async throws {
            Ledger.bootstrapLogging()
            let typeList = types?.split(separator: ",").map(String.init)
            if let typeList, !typeList.allSatisfy(NewEvent.isValidType) {
                throw ValidationError("--types: event types such as account.registered, comma-separated")
            }
            let configuration = try LedgerConfiguration.fromEnvironment()
            try await database.withStore(configuration) { store in
                var cursor = FeedCursor.start
                if let after {
                    do { cursor = try FeedCursor(token: after) } catch { throw ValidationError("--after is not a cursor") }
                } else if !fromStart {
                    cursor = try await store.headCursor()
                }
                let listener = noFollow ? nil : store.listenForRemoteCommits(url: try database.requiredURL(configuration))
                defer { listener?.stop() }
                var printed = 0
                while count.map({ printed < $0 }) ?? true {
                    let generation = store.commitGeneration
                    let page = try await store.readAll(after: cursor, limit: 1000, types: typeList)
                    for event in page.events.prefix((count ?? .max) - printed) {
                        var line = EventDocument.json(event)
                        line.append(UInt8(ascii: "\n"))
                        FileHandle.standardOutput.write(Data(line))
                        printed += 1
                    }
                    cursor = page.nextCursor
                    if page.events.isEmpty {
                        if noFollow { break }
                        await store.waitForCommit(after: generation, timeout: .milliseconds(500))
                    }
                }
            }
        }
    }
}
