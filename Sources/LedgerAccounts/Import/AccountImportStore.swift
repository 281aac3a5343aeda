import Foundation
import LedgerIdentity

/// Where imported accounts are written: PostgreSQL's `PostgresAccountImports`, and an in-memory
/// twin for the tests of the use case and of the HTTP API.
public protocol AccountImportStore: Sendable {
    /// Imports each account whose `(source, external_id)` is not in yet, in one transaction: an
    /// account a claim refuses (an address, number or identity another account holds, one on
    /// the cooldown list) is left out alone, and the rest commit. With `dryRun` every record is
    /// checked the same way and nothing is written. The results are in the accounts' order.
    func importBatch(_ accounts: [AccountCommand.ImportedAccount], dryRun: Bool) async throws -> [ImportResult]
}
