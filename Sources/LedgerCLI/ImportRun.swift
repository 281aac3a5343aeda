import Foundation
import LedgerAccounts

/// Runs an import file through the importer: `jobs` batches written at once (each a
/// transaction on its own connection), their report lines handed on in the file's order.
struct ImportRun {
    let importer: AccountImporter
    let options: AccountImporter.Options
    let jobs: Int

    /// Imports every record of `file`; `done` gets each batch's lines in order, with how far
    /// into the file they reach. Returns the counts.
    func run(_ file: ImportFile, done: ([ImportReportLine], Int) throws -> Void) async throws -> ImportCounts {
        var counts = ImportCounts()
        var index = 0
        while true {
            // A round of up to `jobs` batches, read in order and written at once.
            var round: [(first: Int, entries: [ImportEntry])] = []
            while round.count < jobs {
                let entries = try file.nextBatch(limit: AccountImporter.batchLimit)
                if entries.isEmpty { break }
                round.append((index, entries))
                index += entries.count
            }
            if round.isEmpty { return counts }
            let position = file.position
            let results = try await withThrowingTaskGroup(of: (Int, [ImportReportLine]).self) { group in
                for (offset, batch) in round.enumerated() {
                    group.addTask { [importer, options] in
                        (offset, try await importer.importBatch(batch.entries, firstIndex: batch.first, options: options))
                    }
                }
                var results = [[ImportReportLine]](repeating: [], count: round.count)
                for try await (offset, lines) in group { results[offset] = lines }
                return results
            }
            for lines in results {
                counts.add(lines)
                try done(lines, position)
            }
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
