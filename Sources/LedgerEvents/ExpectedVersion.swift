/// What an append expects of its stream: the optimistic-concurrency check.
public enum ExpectedVersion: Sendable, Hashable {
    /// No check.
    case any
    /// The stream must not exist yet.
    case noStream
    /// The stream must exist, at any version.
    case streamExists
    /// The stream must be exactly at this version (0 means it must not exist).
    case exact(Int64)

    package var sqlKind: String {
        switch self {
        case .any: return "any"
        case .noStream: return "no_stream"
        case .streamExists: return "exists"
        case .exact(let version): return version == 0 ? "no_stream" : "exact"
        }
    }

    package var sqlVersion: Int64 {
        if case .exact(let version) = self { return version }
        return 0
    }
}
