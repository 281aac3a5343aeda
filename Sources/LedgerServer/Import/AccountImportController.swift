import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerCore
import LedgerIdentity
import Synchronization

/// `POST /admin/accounts/import` (`accounts:import`): up to 1000 records of another system in
/// one transaction (docs/api.md "Importing accounts from another system"). The events name the
/// key as their actor. The key is checked before the body is read.
public struct AccountImportController: Sendable {
    let importer: AccountImporter
    let keys: APIKeyGuard

    /// A request's body, at most: 1000 records of a few KiB each.
    static let maximumBodyBytes = 8 << 20

    /// Imports under way on this instance.
    let running = ImportGate()

    public init(importer: AccountImporter, keys: APIKeyGuard) {
        self.importer = importer
        self.keys = keys
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.post("/admin/accounts/import") { request, context in
            try await keys.acting(request, scope: .accountsImport) { _ in
                // One import at a time on an instance: each reads up to 8 MiB and holds a
                // connection for its batch.
                guard running.enter() else {
                    throw IdentityError(.rateLimited, "An import is running on this instance. Try again shortly.", retryAfter: 1)
                }
                defer { running.leave() }
                let body = try await Self.body(request)
                let lines = try await importer.importBatch(body.entries, options: body.options)
                return JSONResponse(.ok, Self.answer(lines))
            }
        }
        return routes
    }

    /// The request read: its records (at most `AccountImporter.batchLimit`) and options.
    struct Body {
        let entries: [ImportEntry]
        let options: AccountImporter.Options
    }

    static func body(_ request: Request) async throws -> Body {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maximumBodyBytes)
        } catch {
            throw APIError(.contentTooLarge, .payloadTooLarge, "The request body is larger than 8 MiB.")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any] else {
            throw APIError(.badRequest, .invalidRequest, "The body is not a JSON object.")
        }
        guard let users = object["users"] as? [Any] else {
            throw APIError(.badRequest, .invalidRequest, "users: expected an array of records.")
        }
        guard users.count <= AccountImporter.batchLimit else {
            throw APIError(
                .contentTooLarge, .payloadTooLarge, "At most \(AccountImporter.batchLimit) records a call; send the rest in another.")
        }
        var problems: [AccountService.ValidationFailure.Problem] = []
        let format = (object["format"] as? String).flatMap(ImportFormat.init(rawValue:))
        if format == nil {
            problems.append(.init(field: "format", code: "invalid_format", message: "Use firebase, auth0 or jsonl."))
        }
        let source = object["source"] as? String ?? format?.rawValue ?? ""
        if !AccountImporter.isValidSource(source) {
            problems.append(.init(field: "source", code: "invalid_source", message: "Name the source in 1–255 characters."))
        }
        var hashConfig: FirebaseHashConfig?
        if let config = object["hash_config"], !(config is NSNull) {
            // Only an object: `JSONSerialization.data` stops the process on a bare string or number.
            hashConfig = (config as? [String: Any]).flatMap { try? JSONSerialization.data(withJSONObject: $0) }
                .flatMap(FirebaseHashConfig.init)
            if hashConfig == nil {
                problems.append(
                    .init(
                        field: "hash_config", code: "invalid_hash_config",
                        message: "Give {algorithm: \"SCRYPT\", base64_signer_key, base64_salt_separator, rounds, mem_cost}."))
            }
        }
        let flags = ["dry_run", "skip_passwords"].map { object[$0] }
        for (name, value) in zip(["dry_run", "skip_passwords"], flags) where value != nil && !(value is Bool) {
            problems.append(.init(field: name, code: "invalid_type", message: "Use true or false."))
        }
        guard problems.isEmpty, let format else { throw AccountService.ValidationFailure(problems: problems) }
        let entries = try format.entries(array: JSONSerialization.data(withJSONObject: users), hashConfig: hashConfig)
        return Body(
            entries: entries,
            options: .init(source: source, skipPasswords: flags[1] as? Bool ?? false, dryRun: flags[0] as? Bool ?? false))
    }

    /// `{imported, skipped, refused: [{index, external_id, reason}], accounts: [{index,
    /// external_id, account_id, outcome}]}`: the counts, the refusals, and the account of every
    /// record that has one.
    static func answer(_ lines: [ImportReportLine]) -> [String: JSONValue] {
        var counts = ImportCounts()
        counts.add(lines)
        return [
            "imported": .int(Int64(counts.imported)), "skipped": .int(Int64(counts.skipped)),
            "refused": .array(
                lines.filter { $0.outcome == .refused }.map {
                    .object([
                        "index": .int(Int64($0.index)), "external_id": JSONValue($0.externalID), "reason": JSONValue($0.reason?.rawValue),
                    ])
                }),
            "accounts": .array(
                lines.compactMap { line in
                    line.accountID.map {
                        .object([
                            "index": .int(Int64(line.index)), "external_id": JSONValue(line.externalID),
                            "account_id": .string($0.lowercased),
                            "outcome": .string(line.outcome.rawValue),
                        ])
                    }
                }),
        ]
    }
}

/// At most one import at a time: `enter` is false while one runs.
final class ImportGate: Sendable {
    private let busy = Mutex(false)

    func enter() -> Bool {
        busy.withLock { busy in
            if busy { return false }
            busy = true
            return true
        }
    }

    func leave() {
        busy.withLock { $0 = false }
    }
}
