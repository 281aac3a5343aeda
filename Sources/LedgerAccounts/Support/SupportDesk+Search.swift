import Foundation
import LedgerIdentity

extension SupportDesk {
    /// The ids of the accounts `query` names: by the projection's exact keys (an address or a
    /// number of a live account; of a deleted one, by its keyed hash on the cooldown list), a
    /// handle ignoring case, or the id's range. Counted first (`admitRead`).
    func find(_ query: SupportQuery, actor: SupportActor) async throws -> [UUID] {
        try await admitRead(by: actor)
        let retention = environment.retention
        let now = environment.clock.now()
        func listed(_ identifier: Retention.Identifier) async throws -> [UUID] {
            guard let listing = try await repository.listing(keyHash: retention.key(identifier), at: now), listing.reason == .deleted
            else { return [] }
            return [listing.accountID]
        }
        switch query {
        case .email(let raw):
            guard let email = EmailAddress(raw) else { throw AccountService.ValidationFailure(problems: [AccountService.invalidEmail]) }
            if let holder = try await repository.emailHolder(email) { return [holder.accountID] }
            return try await listed(.email(email.normalized))
        case .phone(let raw):
            guard let phone = PhoneNumber(international: raw, catalog: catalog) else {
                throw AccountService.ValidationFailure(problems: [
                    .init(field: "phone", code: "invalid_phone", message: "Enter a valid phone number.")
                ])
            }
            if let owner = try await repository.phoneOwner(phone.e164) { return [owner] }
            return try await listed(.phone(phone.e164))
        case .userID(let raw):
            if let accountID = UUID(uuidString: raw) { return [accountID] }
            guard let publicID = PublicUserID(raw) else {
                throw AccountService.ValidationFailure(problems: [
                    .init(field: "user_id", code: "invalid_user_id", message: "Enter a user id such as usr_… or an account id.")
                ])
            }
            return try await repository.accounts(withPublicID: publicID)
        case .handle(let raw):
            guard let handle = Handle(raw.hasPrefix("@") ? String(raw.dropFirst()) : raw) else {
                throw AccountService.ValidationFailure(problems: [
                    .init(field: "handle", code: "invalid_handle", message: "Enter a handle: 3–20 letters, digits or _.")
                ])
            }
            return try await repository.handleHolder(handle).map { [$0] } ?? []
        }
    }
}

extension SupportActor {
    /// Whose reads are counted together: the key's, or the staff member's (never the operator's
    /// name: the key's holder writes whatever name they like).
    var readCounter: String {
        if let keyID { return "key:" + keyID.lowercased }
        if let staffID { return "staff:" + staffID.lowercased }
        return "unnamed"
    }
}
