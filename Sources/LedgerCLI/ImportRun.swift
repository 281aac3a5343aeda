import Foundation
import LedgerAccounts

/// Runs an import file through the importer: up to `jobs` batches written at once (each a
/// transaction on its own connection), their report lines handed on in the file's order. The
/// window slides: as soon as one batch is written the next is read and started, so reading the
/// file and checking records overlaps the database's work instead of waiting for a whole round.
struct ImportRun {
    let importer: AccountImporter
    let options: AccountImporter.Options
    let jobs: Int

    /// A batch written: its number in the file, its lines, and how far into the file it reaches.
    private struct Written: Sendable {
        let number: Int
        let lines: [ImportReportLine]
        let position: Int
    }

    /// Imports every record of `file`; `done` gets each batch's lines in order, with how far
    /// into the file they reach. Returns the counts.
    func run(_ file: ImportFile, done: ([ImportReportLine], Int) throws -> Void) async throws -> ImportCounts {
        try await withThrowingTaskGroup(of: Written.self) { group in
            var counts = ImportCounts()
            var index = 0
            var started = 0
            var handedOn = 0
            // Written ahead of an earlier batch still on its way: held until that one is in.
            var waiting: [Int: Written] = [:]
            func startNext() throws -> Bool {
                let entries = try file.nextBatch(limit: AccountImporter.batchLimit)
                guard !entries.isEmpty else { return false }
                let (number, first, position) = (started, index, file.position)
                group.addTask { [importer, options] in
                    Written(
                        number: number, lines: try await importer.importBatch(entries, firstIndex: first, options: options),
                        position: position)
                }
                started += 1
                index += entries.count
                return true
            }
            var more = true
            while more, started < jobs { more = try startNext() }
            while let written = try await group.next() {
                waiting[written.number] = written
                while let next = waiting.removeValue(forKey: handedOn) {
                    counts.add(next.lines)
                    try done(next.lines, next.position)
                    handedOn += 1
                }
                // At most `jobs` batches in flight and `jobs` more waiting for an earlier one.
                while more, started - handedOn - waiting.count < jobs, started - handedOn < 2 * jobs {
                    more = try startNext()
                }
            }
            return counts
        }
    }
}

/// `--report FILE`: one JSON line a record.
final class ImportReportFile {
    private let handle: FileHandle
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    init(path: String) throws {
        // Readable by its owner only: it names every imported person's id and account.
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw ImportFormat.Unreadable(description: "cannot write the report to \(path)")
        }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    }

    func write(_ lines: [ImportReportLine]) throws {
        var data = Data()
        for line in lines {
            data.append(try encoder.encode(line))
            data.append(UInt8(ascii: "\n"))
        }
        try handle.write(contentsOf: data)
    }

    func close() throws {
        try handle.close()
    }
}

/// The progress bar on a terminal (standard error); nothing when standard error is not one.
final class ImportProgress {
    private let total: Int
    private let enabled = isatty(STDERR_FILENO) == 1
    private var counts = ImportCounts()
    private var lastDrawn = Date.distantPast

    init(total: Int) {
        self.total = total
    }

    func update(_ lines: [ImportReportLine], position: Int) {
        counts.add(lines)
        guard enabled, Date().timeIntervalSince(lastDrawn) > 0.1 else { return }
        lastDrawn = Date()
        draw(position: position)
    }

    func finish() {
        guard enabled else { return }
        draw(position: total)
        FileHandle.standardError.write(Data("\n".utf8))
    }

    private func draw(position: Int) {
        let fraction = total > 0 ? min(1, Double(position) / Double(total)) : 1
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let line = "\r\(bar) \(Int(fraction * 100))%  imported \(counts.imported)  skipped \(counts.skipped)  refused \(counts.refused)"
        FileHandle.standardError.write(Data(line.utf8))
    }
}
