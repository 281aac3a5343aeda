import ArgumentParser
import Foundation
import LedgerApp
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import LedgerServer

/// `ledger dev append-load`: a write load whose every event id is fixed by a seed, for fault runs.
///
/// Each stream gets `events-per-stream` appends, one event each, versions 1, 2, … in order.
/// Every acknowledged append is written to the acknowledgement log the moment PostgreSQL
/// confirms it (one `write(2)` per line, so the line survives a `kill -9` of this process).
/// Running the same command again retries every append with the same event ids: those
/// already stored come back as replays and nothing is stored twice.
struct AppendLoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "append-load",
        abstract: "Append a deterministic load (same seed, same event ids) and log each acknowledgement.")

    @OptionGroup var database: DatabaseOptions
    @Option(help: "Fixes the stream and event ids: a rerun with the same seed retries the same appends.") var seed: String
    @Option(help: "Streams to write.") var streams = 32
    @Option(help: "Appends per stream.") var eventsPerStream = 100
    @Option(help: "Concurrent writers.") var writers = 8
    @Option(help: "File that gets `stream-id event-id version` per acknowledged append.") var ackLog: String

    func run() async throws {
        let url = try database.requiredURL(try LedgerConfiguration.fromEnvironment())
        let log = try AcknowledgementLog(path: ackLog)
        // Unencrypted payloads: a sealed payload gets a fresh nonce on every try, so its retry
        // would be a different content under the same id (an idempotency conflict, by design).
        let assembly = StoreAssembly(url: url, connections: writers + 1, masterKey: try MasterKey.generate())
        let plan = AppendLoadPlan(seed: seed, streams: streams, eventsPerStream: eventsPerStream)
        let writers = self.writers
        // Run, as serve runs it: the appends are group-committed.
        let (appended, replayed) = try await assembly.run { assembly in
            let store = assembly.store
            return try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        var appended = 0
                        var replayed = 0
                        for stream in stride(from: writer, to: plan.streams, by: writers) {
                            let streamID = plan.streamID(stream)
                            for version in 1...Int64(plan.eventsPerStream) {
                                let event = NewEvent(
                                    eventID: plan.eventID(stream, version), type: "load.appended",
                                    payload: Array(#"{"version":\#(version)}"#.utf8))
                                let result = try await store.append(
                                    to: streamID, streamType: "load", subjectID: nil, expected: .exact(version - 1), events: [event])
                                try log.record("\(streamID.lowercased) \(event.eventID.lowercased) \(result.lastVersion)\n")
                                if result.replayed { replayed += 1 } else { appended += 1 }
                            }
                        }
                        return (appended, replayed)
                    }
                }
                return try await group.reduce((0, 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
            }
        }
        print("append-load streams=\(streams) events=\(appended + replayed) appended=\(appended) replayed=\(replayed)")
    }
}

/// The ids of an append load, derived from its seed.
struct AppendLoadPlan: Sendable {
    let seed: String
    let streams: Int
    let eventsPerStream: Int

    func streamID(_ stream: Int) -> UUID { derivedID("stream/\(stream)") }
    func eventID(_ stream: Int, _ version: Int64) -> UUID { derivedID("event/\(stream)/\(version)") }

    /// A version-4-shaped UUID from SHA-256 of the seed and a name.
    private func derivedID(_ name: String) -> UUID {
        var bytes = SHA256.hash("append-load/\(seed)/\(name)")
        bytes[6] = (bytes[6] & 0x0f) | 0x40
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}

/// An append-only file written one whole line per `write(2)`, shared by concurrent writers.
final class AcknowledgementLog: Sendable {
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard descriptor >= 0 else { throw ValidationError("cannot open \(path): \(String(cString: strerror(errno)))") }
    }

    deinit { close(descriptor) }

    func record(_ line: String) throws {
        let bytes = Array(line.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw ValidationError("cannot write the acknowledgement log") }
    }
}
