import Foundation
import LedgerCrypto
import LedgerIdentity

/// Brings accounts from another system (docs/api.md "Importing accounts from another system"):
/// each record is checked here (address, number, providers, the password's form), then a
/// batch of them is written in one transaction by the `AccountImportStore`. Imported accounts
/// get no message: nothing here queues one, and `account.imported`'s events imply none.
public struct AccountImporter: Sendable {
    /// What the operator asked for.
    public struct Options: Sendable, Equatable {
        /// Names the system the records come from: `(source, external_id)` is imported once.
        public var source: String
        /// Imports a record whose password this service cannot check without the password
        /// (the person uses "Forgot password"), rather than refusing it.
        public var skipPasswords: Bool
        /// Checks every record and writes nothing.
        public var dryRun: Bool

        public init(source: String, skipPasswords: Bool = false, dryRun: Bool = false) {
            self.source = source
            self.skipPasswords = skipPasswords
            self.dryRun = dryRun
        }
    }

    /// Records a call takes, at most (`POST /admin/accounts/import`), and a batch of the CLI.
    public static let batchLimit = 1000
    /// Longest external id and source kept (ids of every system we know are far shorter).
    static let maximumIDLength = 255

    let store: any AccountImportStore
    let catalog: CountryCatalog

    public init(store: any AccountImportStore, catalog: CountryCatalog = .standard) {
        self.store = store
        self.catalog = catalog
    }

    /// Imports `entries` (at most `batchLimit`) in one transaction; `firstIndex` numbers them
    /// in the report (their place in the file).
    public func importBatch(_ entries: [ImportEntry], firstIndex: Int = 0, options: Options) async throws -> [ImportReportLine] {
        precondition(entries.count <= Self.batchLimit, "a batch is at most \(Self.batchLimit) records")
        let checked = entries.map { entry -> Result<AccountCommand.ImportedAccount, ImportRefusal> in
            guard case .record(let record) = entry else { return .failure(.invalidRecord) }
            return account(record, options: options)
        }
        let accepted = checked.compactMap { try? $0.get() }
        let results = try await store.importBatch(accepted, dryRun: options.dryRun)
        // A dry run's accounts were never made: no id names one, a duplicate's "skipped" neither.
        let madeInDryRun: Set<UUID> =
            options.dryRun ? Set(results.compactMap { if case .imported(let id) = $0 { id } else { nil } }) : []
        var stored = results.makeIterator()
        return zip(entries, checked).enumerated().map { offset, pair in
            let result: ImportResult
            switch pair.1 {
            case .success:
                result = stored.next() ?? .refused(.invalidRecord)
                switch result {
                case .imported(let id) where madeInDryRun.contains(id):
                    return ImportReportLine(index: firstIndex + offset, externalID: pair.0.externalID, outcome: .imported)
                case .skipped(let id) where madeInDryRun.contains(id):
                    return ImportReportLine(index: firstIndex + offset, externalID: pair.0.externalID, outcome: .skipped)
                default: break
                }
            case .failure(let refusal): result = .refused(refusal)
            }
            return ImportReportLine(index: firstIndex + offset, externalID: pair.0.externalID, result: result)
        }
    }

    /// The longest start of `text` within `bytes` UTF-8 bytes, cut between characters.
    static func prefix(_ text: String, bytes: Int) -> String {
        var kept = ""
        var count = 0
        for character in text {
            count += character.utf8.count
            if count > bytes { break }
            kept.append(character)
        }
        return kept
    }

    /// A source name: 1 to 255 bytes, no control character (`Retention.Identifier.imported`
    /// separates it from the id by a newline).
    public static func isValidSource(_ source: String) -> Bool {
        !source.isEmpty && source.utf8.count <= maximumIDLength
            && !source.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// The account a record makes, or why it makes none.
    func account(_ record: ImportRecord, options: Options) -> Result<AccountCommand.ImportedAccount, ImportRefusal> {
        let externalID = record.externalID
        guard !record.containsNUL else { return .failure(.invalidRecord) }
        guard !externalID.isEmpty, externalID.utf8.count <= Self.maximumIDLength, Self.isValidSource(options.source) else {
            return .failure(.invalidRecord)
        }
        var email: EmailAddress?
        if let raw = record.email, !raw.isEmpty {
            guard let parsed = EmailAddress(raw) else { return .failure(.invalidEmail) }
            email = parsed
        }
        var phone: PhoneNumber?
        if let raw = record.phone, !raw.isEmpty {
            guard let parsed = PhoneNumber(international: raw, catalog: catalog) else { return .failure(.invalidPhone) }
            phone = record.phoneVerified ? parsed : nil
        }
        var providers: [AccountCommand.ProviderIdentityClaim] = []
        for entry in record.providers {
            guard let provider = IdentityProvider(rawValue: entry.provider), !entry.subject.isEmpty,
                entry.subject.utf8.count <= Self.maximumIDLength, !providers.contains(where: { $0.provider == provider })
            else { return .failure(.invalidRecord) }
            var providerEmail: String?
            if let raw = entry.email, !raw.isEmpty {
                guard let parsed = EmailAddress(raw) else { return .failure(.invalidEmail) }
                providerEmail = parsed.value
            }
            providers.append(.init(provider: provider, subject: entry.subject, email: providerEmail, emailVerified: false))
        }
        var passwordHash: String?
        switch record.password {
        case .none: break
        case .hash(let encoded) where ForeignPasswordHash(encoded) != nil: passwordHash = encoded
        case .hash, .unsupported: if !options.skipPasswords { return .failure(.unsupportedHash) }
        }
        // A password opens the account only through an address.
        if passwordHash != nil, email == nil { return .failure(.invalidRecord) }
        // The profile's 100 characters, and at most 400 bytes (a character may be any number of marks).
        let displayName = record.displayName.map { String($0.prefix(100)) }.map { Self.prefix($0, bytes: 400) }
            .flatMap { $0.isEmpty ? nil : $0 }
        let account = AccountCommand.ImportedAccount(
            source: options.source, externalID: externalID, createdAt: record.createdAt, email: email,
            emailVerified: email != nil && record.emailVerified, phone: phone, displayName: displayName, passwordHash: passwordHash,
            providers: providers, handle: Handle.randomTemporary(), disabled: record.disabled)
        return account.hasSignInMethod ? .success(account) : .failure(.invalidRecord)
    }
}
