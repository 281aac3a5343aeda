import Foundation
import LedgerIdentity

/// `decide` under the product's own policies at `now`: what the rules' tests check against.
/// Tests of a configured rule build their `DecisionContext` themselves.
func decide(_ state: AccountState, _ command: AccountCommand, now: Date) throws -> [AccountEvent] {
    try decide(state, command, DecisionContext(now: now, policies: .standard))
}
