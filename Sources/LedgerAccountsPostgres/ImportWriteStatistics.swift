import Synchronization

/// What an import's writes did, for the log and the tests: a batch whose write together failed
/// takes its records one by one, correct but several times slower, so it must not pass unseen.
public final class ImportWriteStatistics: Sendable {
    private let takenOneByOne = Atomic<Int>(0)

    public init() {}

    /// Records written one by one because their batch's write together failed.
    public var recordsTakenOneByOne: Int { takenOneByOne.load(ordering: .relaxed) }

    func tookOneByOne(_ records: Int) {
        takenOneByOne.add(records, ordering: .relaxed)
    }
}
