import Foundation

/// What a decision reads besides the state and the command: the time, and the rules in force.
/// `evolve` reads neither, so a replayed history means what it meant when it was written.
public struct DecisionContext: Sendable {
    public var now: Date
    public var policies: Policies

    public init(now: Date, policies: Policies) {
        self.now = now
        self.policies = policies
    }
}
