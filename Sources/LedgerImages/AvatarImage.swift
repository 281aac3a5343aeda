import CVips
import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// The avatar's picture (docs/accounts.md "Avatars"): a JPEG, PNG or WebP of at most 5 MiB and
/// 8000×8000 pixels, decoded and encoded again by libvips as a JPEG square of at most 512
/// pixels with no metadata (no GPS position, no camera). Anything else, a file that only claims
/// to be one of those, a damaged one or a decompression bomb, is `AvatarImageError`.
public enum AvatarImage {
    public static let maximumBytes = 5 << 20
    public static let maximumSide = 8000
    public static let side = 512

    /// What the first bytes say a file is; libvips is asked to read only that format.
    enum Format: Int32 {
        case jpeg = 0, png = 1, webp = 2

        init?(sniffing bytes: [UInt8]) {
            if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
                self = .jpeg
            } else if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
                self = .png
            } else if bytes.count > 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) {
                self = .webp
            } else {
                return nil
            }
        }
    }

    /// libvips started once, for untrusted input (`ledger_vips_start`).
    private static let started: Bool = ledger_vips_start() == 0

    /// How many uploads may be read, made or wait for a thread of NIO's pool (one per core) at
    /// once: each holds its body (up to 5 MiB) and takes a core for a fraction of a second, and
    /// more would only hold more memory while their callers wait. One per `AvatarService`.
    public final class Gate: Sendable {
        public let limit: Int
        private let inside = Mutex(0)

        /// Four per core by default.
        public init(limit: Int = 4 * max(1, System.coreCount)) {
            self.limit = limit
        }

        /// Runs `body` in a place; `busy` at once when all `limit` are taken.
        public func admit<T>(_ body: () async throws -> T) async throws -> T {
            guard enter() else { throw AvatarImageError(.busy) }
            defer { leave() }
            return try await body()
        }

        /// Takes a place; false when all `limit` are taken.
        func enter() -> Bool {
            inside.withLock { count in
                guard count < limit else { return false }
                count += 1
                return true
            }
        }

        func leave() {
            inside.withLock { $0 -= 1 }
        }
    }

    /// `bytes` as the avatar's JPEG, made on a thread of NIO's pool (never one of Swift
    /// concurrency's few). A caller takes its place in a `Gate` first.
    public static func make(from bytes: [UInt8]) async throws -> [UInt8] {
        try await NIOThreadPool.singleton.runIfActive { try normalize(bytes) }
    }

    /// `bytes` as the avatar's JPEG, made on the calling thread.
    public static func normalize(_ bytes: [UInt8]) throws -> [UInt8] {
        guard bytes.count <= maximumBytes else { throw AvatarImageError(.tooLarge) }
        guard let format = Format(sniffing: bytes) else { throw AvatarImageError(.unsupported) }
        guard started else { throw AvatarImageError(.unavailable) }
        defer { vips_error_clear() }
        return try bytes.withUnsafeBytes { raw -> [UInt8] in
            // The header first: its size is checked before a pixel is decoded.
            guard let header = ledger_vips_load(raw.baseAddress, raw.count, format.rawValue) else {
                throw AvatarImageError(.unsupported)
            }
            let (width, height) = (vips_image_get_width(header), vips_image_get_height(header))
            g_object_unref(header)
            guard width > 0, height > 0, width <= maximumSide, height <= maximumSide else { throw AvatarImageError(.unsupported) }
            guard let shrunk = ledger_vips_square(raw.baseAddress, raw.count, Int32(side)) else { throw AvatarImageError(.unsupported) }
            defer { g_object_unref(shrunk) }
            guard let square = ledger_vips_centre_square(shrunk) else { throw AvatarImageError(.unsupported) }
            defer { g_object_unref(square) }
            guard let flat = ledger_vips_flat_srgb(square) else { throw AvatarImageError(.unsupported) }
            defer { g_object_unref(flat) }
            var output: UnsafeMutableRawPointer?
            var length = 0
            // Pixels are decoded here: a file that breaks off or lies about itself fails now.
            guard ledger_vips_jpeg(flat, &output, &length) == 0, let output else { throw AvatarImageError(.unsupported) }
            defer { g_free(output) }
            return Array(UnsafeRawBufferPointer(start: output, count: length))
        }
    }
}

/// Why a picture was not taken.
public struct AvatarImageError: Error, Equatable, Sendable {
    public enum Code: Sendable, Equatable {
        /// Not a JPEG, PNG or WebP that decodes whole within the limits.
        case unsupported
        /// Over `AvatarImage.maximumBytes`.
        case tooLarge
        /// As many pictures are being made as there are cores: try again in a moment.
        case busy
        /// libvips did not start.
        case unavailable
    }

    public let code: Code

    public init(_ code: Code) {
        self.code = code
    }
}
