import Foundation

/// `evolve` for the import area: `account.imported` records where the account came from; the
/// events after it (`account.registered` first) make the account.
func evolveImport(_ state: inout AccountState, _ event: AccountEvent, at recordedAt: Date) {
    guard case .imported(let imported) = event else { preconditionFailure("evolve routes \(event.type) elsewhere") }
    state.importedFrom = imported.source
}
