import Foundation

/// The file development mode records its messages in (`LogDeliverySink`): appended a line at a
/// time, readable by its owner only (it holds codes, links and recipients), and read back by
/// `ledger dev messages`.
public enum DevelopmentMessageFile {
    /// One message as the file holds it: the delivery payload's fields.
    public struct Message: Decodable, Sendable, Equatable {
        public let sentAt: String
        public let channel: String
        public let template: String
        public let to: String
        public let code: String?
        public let link: String?
        public let token: String?

        enum CodingKeys: String, CodingKey {
            case sentAt = "sent_at"
            case channel, template, to, code, link, token
        }

        /// Whether it went to `recipient` (an address in any case, a number with or without
        /// spaces) and, when given, is a `template` message.
        public func matches(to recipient: String?, template wanted: String?) -> Bool {
            func normalized(_ text: String) -> String { text.lowercased().filter { !$0.isWhitespace && $0 != "-" } }
            if let recipient, normalized(recipient) != normalized(to) { return false }
            if let wanted, wanted != template { return false }
            return true
        }
    }

    static func append(_ line: [UInt8], to path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        // Never through a link planted in its place, and its owner's alone even if it was made wider.
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        defer { close(descriptor) }
        guard fchmod(descriptor, 0o600) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        // One write of the whole line, which O_APPEND places after every other.
        let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == line.count else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
    }

    /// Every message in the file, oldest first; none when there is no file yet. A line that is
    /// not a message (one being written) is skipped.
    public static func messages(at path: String) -> [Message] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        let decoder = JSONDecoder()
        return data.split(separator: UInt8(ascii: "\n")).compactMap { try? decoder.decode(Message.self, from: Data($0)) }
    }
}
