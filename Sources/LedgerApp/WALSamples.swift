import Foundation

/// The primary's write-ahead log position, sampled over the last `span` seconds (oldest
/// first), against which a standby's replayed position is read as a time: how far behind it
/// is (docs/architecture.md "Readers on a standby").
///
/// Unlike `now() - pg_last_xact_replay_timestamp()`, which grows on an idle primary with
/// nothing to replay, this counts only what the primary wrote and the standby has not replayed.
public struct WALSamples: Sendable {
    public struct Sample: Equatable, Sendable {
        public let at: Date
        public let position: WALPosition

        public init(at: Date, position: WALPosition) {
            self.at = at
            self.position = position
        }
    }

    /// Oldest first; the positions only grow.
    public private(set) var samples: [Sample] = []
    /// How long a sample is kept: a standby behind every kept sample is at least this far behind.
    public let span: TimeInterval

    public init(span: TimeInterval) {
        self.span = span
    }

    /// Records the primary's position at `time`. A position the newest sample already has only
    /// moves that sample's time on (an idle primary keeps one sample: a standby that has it
    /// lacks nothing the primary had then); a position behind it (another primary) starts over.
    public mutating func record(_ position: WALPosition, at time: Date) {
        if let newest = samples.last, position <= newest.position {
            if position < newest.position { samples.removeAll() } else { samples.removeLast() }
        }
        samples.append(Sample(at: time, position: position))
        // Dropping old samples only ever makes a lag read longer, never shorter.
        if let keepFrom = samples.firstIndex(where: { time.timeIntervalSince($0.at) <= span }), keepFrom > 0 {
            samples.removeFirst(keepFrom)
        }
    }

    /// Seconds a standby that has replayed up to `replayed` is behind at `now`: 0 when it has
    /// the newest sample, else the age of the newest sample it has (everything the primary had
    /// written by then, it has replayed); nil when it has none of them, further behind than
    /// `reach(at:)`.
    public func lag(of replayed: WALPosition, at now: Date) -> TimeInterval? {
        guard let newest = samples.last else { return nil }
        if replayed >= newest.position { return 0 }
        guard let replayedSample = samples.last(where: { $0.position <= replayed }) else { return nil }
        return max(0, now.timeIntervalSince(replayedSample.at))
    }

    /// The age of the oldest sample at `now`: how far back the samples see.
    public func reach(at now: Date) -> TimeInterval {
        samples.first.map { max(0, now.timeIntervalSince($0.at)) } ?? 0
    }
}
