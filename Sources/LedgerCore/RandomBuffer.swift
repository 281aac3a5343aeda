import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Random bytes from the kernel's generator (`/dev/urandom`), fetched 4 KiB at a time and each
/// handed out once: an id then costs no system call. `SystemRandomNumberGenerator` makes one
/// call per 8 bytes, two per UUID, and an import makes six million UUIDs (an event's id each).
/// For ids only; secrets (tokens, keys) come from OpenSSL's generator (`SecureRandom`).
final class RandomBuffer: Sendable {
    static let shared = RandomBuffer()

    private struct State {
        var bytes = [UInt8](repeating: 0, count: 4096)
        var offset = 4096
    }

    private let state = Mutex(State())

    /// 128 bits never handed out before.
    func next128() -> (UInt64, UInt64) {
        state.withLock { state in
            if state.offset + 16 > state.bytes.count {
                Self.fill(&state.bytes)
                state.offset = 0
            }
            defer { state.offset += 16 }
            return state.bytes.withUnsafeBytes { raw in
                (
                    raw.loadUnaligned(fromByteOffset: state.offset, as: UInt64.self),
                    raw.loadUnaligned(fromByteOffset: state.offset + 8, as: UInt64.self)
                )
            }
        }
    }

    /// The kernel's generator, opened once (`getrandom` is not in Swift's Glibc module).
    private static let urandom: Int32 = open("/dev/urandom", O_RDONLY | O_CLOEXEC)

    private static func fill(_ bytes: inout [UInt8]) {
        var filled = 0
        if urandom >= 0 {
            bytes.withUnsafeMutableBytes { raw in
                while filled < raw.count {
                    let count = read(urandom, raw.baseAddress! + filled, raw.count - filled)
                    guard count > 0 else { break }
                    filled += count
                }
            }
        }
        guard filled < bytes.count else { return }
        // No /dev/urandom (a chroot): the standard library's generator.
        var generator = SystemRandomNumberGenerator()
        for index in filled..<bytes.count { bytes[index] = generator.next() }
    }
}
