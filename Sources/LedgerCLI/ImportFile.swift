import Foundation
import LedgerAccounts

/// An import file, a batch of records at a time. Firebase's and Auth0's files are one JSON
/// document, read whole; JSON lines are read as they come, so a file of millions never sits in
/// memory at once.
final class ImportFile {
    private enum Source {
        case records([ImportEntry], next: Int)
        case lines(FileHandle, buffer: Data, done: Bool)
    }

    private var source: Source
    /// Records (JSON) or bytes (JSON lines) in the file, for the progress bar.
    let progressTotal: Int
    /// Records (JSON) or bytes (JSON lines) read so far.
    private(set) var position = 0
    /// A line longer than this is refused (`invalid_record`) without being held whole.
    static let maximumLineBytes = 1 << 20

    /// - Throws: when the file cannot be opened, or a JSON file is not its format's shape.
    init(path: String, format: ImportFormat, hashConfig: FirebaseHashConfig?) throws {
        switch format {
        case .firebase, .auth0:
            let entries = try format.entries(try Data(contentsOf: URL(fileURLWithPath: path)), hashConfig: hashConfig)
            source = .records(entries, next: 0)
            progressTotal = entries.count
        case .jsonl:
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw ImportFormat.Unreadable(description: "cannot read \(path)")
            }
            source = .lines(handle, buffer: Data(), done: false)
            progressTotal = Int((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)??.intValue ?? 0)
        }
    }

    /// Up to `limit` records more; empty at the end of the file.
    func nextBatch(limit: Int) throws -> [ImportEntry] {
        switch source {
        case .records(let entries, let next):
            let end = min(entries.count, next + limit)
            source = .records(entries, next: end)
            position = end
            return Array(entries[next..<end])
        case .lines(let handle, var buffer, var done):
            var batch: [ImportEntry] = []
            var skippingLongLine = false
            // Lines are read where they lie; the bytes before `start` are dropped once a chunk is read.
            var start = buffer.startIndex
            while batch.count < limit {
                if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                    let line = buffer[start..<newline]
                    position += line.count + 1
                    if skippingLongLine {
                        skippingLongLine = false
                    } else if line.count > Self.maximumLineBytes {
                        batch.append(.unreadable(externalID: nil))
                    } else if let entry = ImportFormat.jsonLine(line) {
                        batch.append(entry)
                    }
                    start = newline + 1
                    continue
                }
                if buffer.endIndex - start > Self.maximumLineBytes {
                    // A line this long is no record: refused, and the rest of it read past.
                    if !skippingLongLine { batch.append(.unreadable(externalID: nil)) }
                    skippingLongLine = true
                    position += buffer.endIndex - start
                    start = buffer.endIndex
                }
                if done {
                    if start < buffer.endIndex, !skippingLongLine, let entry = ImportFormat.jsonLine(buffer[start...]) {
                        batch.append(entry)
                    }
                    position += buffer.endIndex - start
                    start = buffer.endIndex
                    break
                }
                let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
                buffer = Data(buffer[start...])
                start = buffer.startIndex
                if chunk.isEmpty { done = true } else { buffer.append(chunk) }
            }
            buffer = Data(buffer[start...])
            source = .lines(handle, buffer: buffer, done: done)
            return batch
        }
    }
}
