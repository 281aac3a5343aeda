import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerCore
import LedgerEvents
import LedgerIdentity

/// Holds reported by backends (`holds:write`), the deletion preflight, and the deletion
/// itself (docs/architecture.md "Deletion").
public struct DeletionController: Sendable {
    let accounts: AccountService
    let keys: APIKeyGuard

    public init(accounts: AccountService, keys: APIKeyGuard) {
        self.accounts = accounts
        self.keys = keys
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        let signedIn = routes.group().add(middleware: SessionMiddleware(accounts: accounts))
        routes.put("/accounts/:id/holds/:ref") { request, context in
            try await keys.acting(request, scope: .holdsWrite) { key in
                let accountID = try AccountAdminController.accountID(context)
                let body = try await request.decodeJSON(HoldRequest.self, context: context)
                let hold = try Self.hold(ref: context.parameters.get("ref"), body, keyID: key.id.lowercased)
                try await accounts.placeHold(accountID, hold)
                return JSONResponse(.ok, Self.holdBody(hold, accountID: accountID))
            }
        }
        routes.delete("/accounts/:id/holds/:ref") { request, context in
            try await keys.acting(request, scope: .holdsWrite) { key in
                let (accountID, ref) = try Self.target(context)
                try await accounts.releaseHold(
                    accountID, ref: ref, keyID: key.id.lowercased, administrator: key.isAdministrator)
                return Response(status: .noContent)
            }
        }
        signedIn.get("/me/delete-preflight") { request, context in
            let session = try context.requireSession()
            let blockers = try await accounts.deletionPreflight(session.accountID)
            return JSONResponse(.ok, ["blockers": .array(blockers.map(Self.blockerBody))])
        }
        signedIn.get("/me/export") { request, context in
            let session = try context.requireSession()
            let events = try await accounts.export(session.accountID)
            return JSONResponse(
                .ok,
                [
                    "account_id": .string(session.accountID.lowercased),
                    "events": .array(try events.map(Self.exportedEvent)),
                ])
        }
        signedIn.delete("/me") { request, context in
            let session = try context.requireSession()
            let state = try await accounts.deleteAccount(session, reauthToken: request.headers[.xReauthToken])
            return JSONResponse(
                .accepted,
                [
                    "deleted_at": JSONValue(timestamp: state.deletedAt),
                    "purge_after": JSONValue(timestamp: state.purgeAfter),
                ])
        }
        return routes
    }

    /// `{event_id, type, schema_version, version, recorded_at, data}` with secrets' hashes left
    /// out and ids in lower case, as the event feed has them.
    static func exportedEvent(_ event: RecordedEvent) throws -> JSONValue {
        var data = JSONValue.null
        // A support call's record says it happened, not who did it or why (docs/support.md).
        let notes = AccountService.carriesStaffNotes(event.type)
        let hidden: (Substring) -> Bool = {
            notes ? AccountService.isRedactedFromStaffRecord(String($0)) : AccountService.isRedactedInExport(String($0))
        }
        if let payload = event.payload, let filtered = JSONObjectFilter.filtered(payload, dropping: hidden, lowercasingIDs: true) {
            data = try JSONDecoder().decode(JSONValue.self, from: Data(filtered))
        }
        return .object([
            "event_id": .string(event.eventID.lowercased), "type": .string(event.type),
            "schema_version": .int(Int64(event.schemaVersion)), "version": .int(event.streamVersion),
            "recorded_at": .string(RFC3339.format(event.recordedAt)), "data": data,
        ])
    }

    static func target(_ context: LedgerRequestContext) throws -> (UUID, String) {
        let accountID = try AccountAdminController.accountID(context)
        let ref = context.parameters.get("ref")
        if let problem = refProblem(ref) { throw AccountService.ValidationFailure(problems: [problem]) }
        return (accountID, ref ?? "")
    }

    /// The hold a `PUT` describes, or every rule its reference and body break (`422`).
    static func hold(ref: String?, _ body: HoldRequest, keyID: String) throws -> Hold {
        typealias Problem = AccountService.ValidationFailure.Problem
        var problems = [refProblem(ref)].compactMap { $0 }
        let kind = HoldKind(rawValue: body.kind)
        if kind == nil {
            problems.append(
                Problem(field: "kind", code: "invalid_kind", message: "Use upcoming_session, upcoming_booking, pending_payout or dispute."))
        }
        if let amount = body.amount, !amount.hasCurrencyCode {
            problems.append(Problem(field: "amount.currency", code: "invalid_currency", message: "Use an ISO 4217 code, such as EUR."))
        }
        if let amount = body.amount, !amount.isWithinBounds {
            problems.append(Problem(field: "amount", code: "invalid_amount", message: "An amount is at most 10^15 minor units either way."))
        }
        let startsAt = date(body.startsAt, "starts_at", &problems)
        let releasesAt = date(body.releasesAt, "releases_at", &problems)
        guard let ref, let kind, problems.isEmpty else { throw AccountService.ValidationFailure(problems: problems) }
        return Hold(ref: ref, kind: kind, startsAt: startsAt, title: body.title, amount: body.amount, releasesAt: releasesAt, keyID: keyID)
    }

    static func refProblem(_ ref: String?) -> AccountService.ValidationFailure.Problem? {
        guard let ref, (1...200).contains(ref.count) else {
            return .init(field: "ref", code: "invalid_ref", message: "A hold reference is 1–200 characters.")
        }
        return nil
    }

    static func date(_ text: String?, _ field: String, _ problems: inout [AccountService.ValidationFailure.Problem]) -> Date? {
        guard let text else { return nil }
        guard let date = RFC3339.parse(text) else {
            problems.append(.init(field: field, code: "invalid_date", message: "\(field) must be an RFC 3339 time."))
            return nil
        }
        return date
    }

    static func holdBody(_ hold: Hold, accountID: UUID? = nil) -> [String: JSONValue] {
        var object: [String: JSONValue] = ["ref": .string(hold.ref), "kind": .string(hold.kind.rawValue)]
        if let accountID { object["account_id"] = .string(accountID.lowercased) }
        object["starts_at"] = JSONValue(timestamp: hold.startsAt)
        object["title"] = JSONValue(hold.title)
        // Left out when there is none (openapi.yaml `Hold`: a nullable reference defeats generators).
        if let amount = hold.amount { object["amount"] = .object(["currency": .string(amount.currency), "minor": .int(amount.minor)]) }
        object["releases_at"] = JSONValue(timestamp: hold.releasesAt)
        return object
    }

    /// `{kind, count, items, total?}`: payouts carry their total per currency when there is one currency.
    static func blockerBody(_ blocker: DeletionBlocker) -> JSONValue {
        var object: [String: JSONValue] = [
            "kind": .string(blocker.kind.rawValue), "count": .int(Int64(blocker.items.count)),
            "items": .array(blocker.items.map { .object(holdBody($0)) }),
        ]
        if let total = Money.total(blocker.items.compactMap(\.amount)) {
            object["total"] = .object(["currency": .string(total.currency), "minor": .int(total.minor)])
        }
        return .object(object)
    }
}
