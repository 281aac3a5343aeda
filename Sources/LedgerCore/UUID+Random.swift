import Foundation

extension UUID {
    /// A random (version 4) UUID from the system's generator (`getrandom`, `RandomBuffer`). Foundation's
    /// `UUID()` opens and reads `/dev/urandom` on each call here, which showed up at a few
    /// percent of the service's time on the paths that make one per request or per event.
    public static func random() -> UUID {
        stamped(version: 4) { _ in }
    }

    /// A time-ordered (version 7, RFC 9562) UUID: the Unix time in milliseconds, then random
    /// bits. Ids made later sort later, so a B-tree index on them grows at its right edge
    /// instead of touching a random page per insert (and, after each checkpoint, writing
    /// that page whole to the WAL).
    public static func timeOrdered(at date: Date = Date()) -> UUID {
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        return stamped(version: 7) { raw in
            for index in 0..<6 { raw[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - UInt64(index)))) }
        }
    }

    /// 128 random bits, then `prepare`'s changes, then the version and the RFC 4122 variant.
    private static func stamped(version: UInt8, _ prepare: (UnsafeMutableRawBufferPointer) -> Void) -> UUID {
        var bytes = RandomBuffer.shared.next128()
        return withUnsafeMutableBytes(of: &bytes) { raw in
            prepare(raw)
            raw[6] = raw[6] & 0x0F | version << 4
            raw[8] = raw[8] & 0x3F | 0x80
            return UUID(uuid: raw.load(as: uuid_t.self))
        }
    }
}
