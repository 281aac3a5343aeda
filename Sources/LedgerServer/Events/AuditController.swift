import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerCore
import LedgerEvents
import LedgerIdentity

/// One account's history for auditors and compliance jobs (`audit:read`): its events, its
/// state at any instant, and its chain check (docs/architecture.md "Events and audit"; docs/events.md).
public struct AuditController: Sendable {
    let audit: any AccountAuditing
    let keys: APIKeyGuard
    let clock: any LedgerClock

    public init(audit: any AccountAuditing, keys: APIKeyGuard, clock: any LedgerClock) {
        self.audit = audit
        self.keys = keys
        self.clock = clock
    }

    static let noAccount = APIError(.notFound, .init("no_account"), "No account found.")

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.get("/accounts/:id/events") { request, context in
            try await keys.authorize(request, scope: .auditRead)
            guard let events = try await audit.history(try Self.accountID(context)) else { throw Self.noAccount }
            var body = Array(#"{"events":"#.utf8)
            body.append(contentsOf: EventDocument.auditJSONArray(events))
            body.append(UInt8(ascii: "}"))
            return Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        routes.get("/accounts/:id/state") { request, context in
            try await keys.authorize(request, scope: .auditRead)
            let accountID = try Self.accountID(context)
            var at = clock.now()
            if let text = request.uri.queryParameters["at"] {
                guard let parsed = RFC3339.parse(String(text)) else {
                    throw APIError(.badRequest, .invalidRequest, "at must be an RFC 3339 time, such as 2026-11-23T10:00:00Z.")
                }
                // Times are shown to the second: `at` covers the whole second it names.
                at = RFC3339.endOfSecond(parsed)
            }
            guard let pointInTime = try await audit.state(accountID, at: at) else {
                throw APIError(.notFound, .init("no_account"), "No account existed at that time.")
            }
            return try JSONResponse(.ok, encoding: PointInTimeBody(pointInTime))
        }
        routes.get("/accounts/:id/verify") { request, context in
            try await keys.authorize(request, scope: .auditRead)
            guard let verification = try await audit.verify(try Self.accountID(context)) else { throw Self.noAccount }
            var body: [String: JSONValue] = ["ok": .bool(verification.ok), "events": .int(Int64(verification.events))]
            if let bad = verification.firstBadVersion {
                body["first_bad_version"] = .int(bad)
                body["reason"] = JSONValue(verification.reason)
            }
            return JSONResponse(.ok, body)
        }
        return routes
    }

    static func accountID(_ context: LedgerRequestContext) throws -> UUID {
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else { throw noAccount }
        return id
    }
}

/// `{account_id, at, version, hub, profile, lifecycle}` of openapi.yaml (also what `ledger replay` prints).
public struct PointInTimeBody: Encodable, Sendable {
    let pointInTime: AccountPointInTime
    public init(_ pointInTime: AccountPointInTime) { self.pointInTime = pointInTime }

    enum CodingKeys: String, CodingKey { case accountID = "account_id", at, version, hub, profile, lifecycle }
    enum ProfileKeys: String, CodingKey { case displayName = "display_name", handle }
    enum LifecycleKeys: String, CodingKey {
        case status, disabledAt = "disabled_at", deletedAt = "deleted_at", purgeAfter = "purge_after", purgedAt = "purged_at"
    }

    public func encode(to encoder: any Encoder) throws {
        let state = pointInTime.state
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(state.accountID.lowercased, forKey: .accountID)
        try container.encode(RFC3339.format(pointInTime.at), forKey: .at)
        try container.encode(state.version, forKey: .version)
        try container.encode(JSONValue.object(AuthMethodsBody(AccountSummary(state)).fields), forKey: .hub)
        var profile = container.nestedContainer(keyedBy: ProfileKeys.self, forKey: .profile)
        try profile.encode(state.displayName, forKey: .displayName)
        try profile.encode(state.handle, forKey: .handle)
        var lifecycle = container.nestedContainer(keyedBy: LifecycleKeys.self, forKey: .lifecycle)
        try lifecycle.encode(pointInTime.status, forKey: .status)
        try lifecycle.encode(state.disabledAt.map(RFC3339.format), forKey: .disabledAt)
        try lifecycle.encode(state.deletedAt.map(RFC3339.format), forKey: .deletedAt)
        try lifecycle.encode(state.purgeAfter.map(RFC3339.format), forKey: .purgeAfter)
        try lifecycle.encode(state.purgedAt.map(RFC3339.format), forKey: .purgedAt)
    }
}
