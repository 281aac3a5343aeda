import Foundation

/// `evolve` for the support desk: a record changes nothing (its effects are events of their own).
func evolveSupport(_ state: inout AccountState, _ event: AccountEvent, at recordedAt: Date) {
    guard case .admin = event else { preconditionFailure("evolve routes \(event.type) elsewhere") }
}
