import Foundation
import LedgerIdentity

/// Why a record was not imported (the contract's reasons).
public enum ImportRefusal: String, Error, Sendable, Codable, Equatable, CaseIterable {
    case emailTaken = "email_taken"
    case phoneTaken = "phone_taken"
    /// An Apple or Google identity another account holds.
    case providerTaken = "provider_taken"
    /// An address or number of a deleted account in its cooldown, or held for a revert link.
    case identifierHeld = "identifier_held"
    case invalidEmail = "invalid_email"
    case invalidPhone = "invalid_phone"
    case unsupportedHash = "unsupported_hash"
    case invalidRecord = "invalid_record"
}

extension ImportRefusal {
    /// The refusal a record's command met: a claim another account holds, the cooldown list, or
    /// the decision itself; nil for an error that is not the record's, which ends its batch.
    /// Both stores read their errors through it.
    public init?(refusing error: any Error) {
        if let taken = error as? ClaimTaken {
            switch taken.claim {
            case .email: self = .emailTaken
            case .phone: self = .phoneTaken
            case .apple, .google: self = .providerTaken
            case .handle, .passkey: self = .invalidRecord
            }
        } else if let refused = error as? IdentityError {
            self = [.signupCooldown, .emailHeld].contains(refused.code) ? .identifierHeld : .invalidRecord
        } else {
            return nil
        }
    }
}

/// What became of one record in the store.
public enum ImportResult: Sendable, Equatable {
    case imported(accountID: UUID)
    /// Its `(source, external_id)` was in already (this account).
    case skipped(accountID: UUID)
    case refused(ImportRefusal)
}

/// One line of `--report` and one entry of the answer: what became of the record at `index`
/// (0-based, in the file or the request).
public struct ImportReportLine: Sendable, Equatable, Encodable {
    public enum Outcome: String, Sendable, Encodable { case imported, skipped, refused }

    public var index: Int
    public var externalID: String?
    public var accountID: UUID?
    public var outcome: Outcome
    public var reason: ImportRefusal?

    public init(index: Int, externalID: String?, result: ImportResult) {
        self.index = index
        self.externalID = externalID
        switch result {
        case .imported(let accountID): (outcome, self.accountID, reason) = (.imported, accountID, nil)
        case .skipped(let accountID): (outcome, self.accountID, reason) = (.skipped, accountID, nil)
        case .refused(let refusal): (outcome, accountID, reason) = (.refused, nil, refusal)
        }
    }

    /// A line without an account: a dry run's `imported`.
    public init(index: Int, externalID: String?, outcome: Outcome) {
        (self.index, self.externalID, self.outcome, accountID, reason) = (index, externalID, outcome, nil, nil)
    }

    enum CodingKeys: String, CodingKey { case index, externalID = "external_id", accountID = "account_id", outcome, reason }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(index, forKey: .index)
        try container.encodeIfPresent(externalID, forKey: .externalID)
        try container.encodeIfPresent(accountID?.lowercased, forKey: .accountID)
        try container.encode(outcome, forKey: .outcome)
        try container.encodeIfPresent(reason, forKey: .reason)
    }
}

/// The counts an import ends with.
public struct ImportCounts: Sendable, Equatable {
    public var imported = 0
    public var skipped = 0
    public var refused = 0

    public init() {}

    public mutating func add(_ lines: [ImportReportLine]) {
        for line in lines {
            switch line.outcome {
            case .imported: imported += 1
            case .skipped: skipped += 1
            case .refused: refused += 1
            }
        }
    }
}
