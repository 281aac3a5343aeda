import LedgerCore

/// Measured durations, sorted, in milliseconds: the percentiles a benchmark prints.
struct Latencies: Sendable {
    let milliseconds: [Double]

    init(_ durations: some Sequence<Duration>) {
        milliseconds = durations.map(\.inMilliseconds).sorted()
    }

    var count: Int { milliseconds.count }
    var longest: Double { milliseconds.last ?? .nan }

    /// The value below which a fraction `p` of the measurements lie (NaN when there are none).
    func percentile(_ p: Double) -> Double {
        milliseconds.isEmpty ? .nan : milliseconds[min(milliseconds.count - 1, Int(Double(milliseconds.count) * p))]
    }
}
