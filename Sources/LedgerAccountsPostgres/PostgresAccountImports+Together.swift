import Foundation
import LedgerAccounts
import LedgerCore
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres

/// A batch's new accounts written together: what makes an import of a million records take
/// minutes rather than an hour. Each account is decided in memory as the one-at-a-time path
/// decides it; the claims of all are checked in one query; then the data keys, every event
/// (`EventStore.queueNewStreams`), the projections' rows and the import records go out in a
/// few set-based statements, on a savepoint.
extension PostgresAccountImports {
    /// A record that reached the write: its place in the batch, its key and its account.
    struct Pending {
        let offset: Int
        let account: AccountCommand.ImportedAccount
        let key: [UInt8]
    }

    private struct Decided {
        let pending: Pending
        let accountID: UUID
        let stored: [(payload: [UInt8], event: AccountEvent)]
        let claims: [Retention.Identifier]
    }

    /// The results by offset; nil when the write failed (an address a concurrent sign-up took
    /// meanwhile, say): the savepoint undid it, and the caller takes the records one at a time.
    func importTogether(_ records: [Pending], at now: Date, on connection: PostgresConnection) async throws -> [Int: ImportResult]? {
        var results: [Int: ImportResult] = [:]
        var decided: [Decided] = []
        let context = DecisionContext(now: now, policies: repository.policies)
        for pending in records {
            // Random, as a sign-up's: `PublicUserID` is the id's first 50 bits, and a
            // time-ordered id would give a whole batch (one instant) the same `usr_…`.
            let accountID = UUID.random()
            do {
                let events = try decide(AccountState(accountID: accountID), .importAccount(pending.account), context)
                let stored = try events.map { try $0.stored() }
                decided.append(
                    Decided(
                        pending: pending, accountID: accountID, stored: stored,
                        claims: Retention.Identifier.claimed(by: stored.map(\.event))))
            } catch {
                results[pending.offset] = .refused(Self.refusal(error) ?? .invalidRecord)
            }
        }
        let refusals = try await claimRefusals(decided.map(\.claims), at: now, on: connection)
        let accepted = zip(decided, refusals).compactMap { entry, refusal -> Decided? in
            if let refusal { results[entry.pending.offset] = .refused(refusal) }
            return refusal == nil ? entry : nil
        }
        guard !accepted.isEmpty else { return results }

        // Sent now, not queued: a failure before the next statement must find it there to roll back to.
        _ = try await connection.query("SAVEPOINT import_together")
        do {
            let metadata = EventMetadata.current
            try repository.store.queueNewStreams(
                accepted.map { entry in
                    NewStream(
                        streamID: entry.accountID, streamType: PostgresAccountRepository.streamType, subjectID: entry.accountID,
                        events: entry.stored.map {
                            NewEvent(type: $0.event.type, schemaVersion: $0.event.schemaVersion, payload: $0.payload, metadata: metadata)
                        })
                }, recordedAt: now, on: connection)
            var projector = AccountProjector()
            for entry in accepted {
                let empty = AccountState(accountID: entry.accountID)
                let events = entry.stored.map(\.event)
                projector.add(events.reduce(into: empty) { evolve(&$0, $1, at: now) }, events: events.map { ($0, now) }, from: empty)
            }
            try await projector.write(on: connection, into: .live)
            var imports = BinaryRecordset()
            for entry in accepted {
                imports.row {
                    $0.field("key", bytes: entry.pending.key)
                    $0.field("account", entry.accountID)
                }
            }
            connection.queue(
                "INSERT INTO account_imports (key_hmac, account_id, imported_at) SELECT r.key, r.account, $3 FROM \(imports.source)",
                imports.parameters + [.timestamp(now)])
            _ = try await connection.query("RELEASE SAVEPOINT import_together")
        } catch {
            connection.discardQueued()
            _ = try await connection.query("ROLLBACK TO SAVEPOINT import_together")
            // A claim taken meanwhile is expected now and then; anything else (a check of
            // `ledger_insert_new_streams` failing) is a fault worth seeing. Codes only: an
            // error's detail may name an address.
            if !(error is ClaimTaken) {
                logger.warning(
                    "a batch's write together failed: its records go one by one",
                    metadata: [
                        "records": "\(accepted.count)",
                        "error": "\((error as? PostgresError).map { "\($0.code) \($0.sqlState ?? "")" } ?? "\(type(of: error))")",
                    ])
            }
            return nil
        }
        for entry in accepted { results[entry.pending.offset] = .imported(accountID: entry.accountID) }
        return results
    }

    /// Why each account's claims refuse it, or nil: an identifier an earlier account of the
    /// batch claims, one a live account holds, or one on the cooldown list. Each identifier's
    /// claim lock is taken first (in one order), as every claiming transaction takes it
    /// (`guardClaims`), so a deletion listing it meanwhile is seen.
    private func claimRefusals(
        _ claims: [[Retention.Identifier]], at now: Date, on connection: PostgresConnection
    ) async throws -> [ImportRefusal?] {
        var refusals = [ImportRefusal?](repeating: nil, count: claims.count)
        let all = claims.flatMap { $0 }
        guard !all.isEmpty else { return refusals }
        // Each identifier's keyed hash, once: the locks, the cooldown list and the check below read it.
        var keyOf: [Retention.Identifier: String] = [:]
        for identifier in all where keyOf[identifier] == nil { keyOf[identifier] = Hex.encode(repository.retention.key(identifier)) }
        let keys = Set(keyOf.values)
        PostgresAccountImports.queueLocks(keys.map { "claim:" + $0 }, on: connection)
        func values(_ pick: (Retention.Identifier) -> String?) -> PostgresParameter {
            .text(PostgresArray.literal(all.compactMap(pick), quoted: true))
        }
        let rows = try await connection.query(
            """
            SELECT 'email:' || email_normalized FROM accounts WHERE email_normalized = ANY($1::text[])
            UNION ALL SELECT 'phone:' || phone_e164 FROM accounts WHERE phone_e164 = ANY($2::text[])
            UNION ALL SELECT 'apple:' || apple_subject FROM accounts WHERE apple_subject = ANY($3::text[])
            UNION ALL SELECT 'google:' || google_subject FROM accounts WHERE google_subject = ANY($4::text[])
            UNION ALL SELECT 'held:' || encode(key_hmac, 'hex') FROM signup_cooldowns
             WHERE key_hmac IN (SELECT decode(k, 'hex') FROM unnest(string_to_array($5, ',')) AS k) AND until > $6
            """,
            [
                values { if case .email(let email) = $0 { email } else { nil } },
                values { if case .phone(let phone) = $0 { phone } else { nil } },
                values { if case .provider(.apple, let subject) = $0 { subject } else { nil } },
                values { if case .provider(.google, let subject) = $0 { subject } else { nil } },
                .text(keys.sorted().joined(separator: ",")), .timestamp(now),
            ])
        var taken: Set<String> = []
        for row in 0..<rows.rowCount { if let text = rows[row].string(0) { taken.insert(text) } }
        // In the file's order: an identifier the database holds refuses its record; one an earlier
        // record took (a record refused takes nothing) refuses the later one, as one by one would.
        for (index, identifiers) in claims.enumerated() {
            for identifier in identifiers {
                if let key = keyOf[identifier], taken.contains("held:" + key) {
                    refusals[index] = .identifierHeld
                } else if taken.contains(identifier.text) {
                    refusals[index] = Self.refusal(taking: identifier)
                }
                if refusals[index] != nil { break }
            }
            if refusals[index] == nil { taken.formUnion(identifiers.map(\.text)) }
        }
        return refusals
    }

    /// The refusal of a record whose `identifier` someone else holds.
    static func refusal(taking identifier: Retention.Identifier) -> ImportRefusal {
        switch identifier {
        case .email: return .emailTaken
        case .phone: return .phoneTaken
        case .provider, .imported: return .providerTaken
        }
    }
}
