import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres

/// Webhook subscriptions in PostgreSQL: created and read by admins, claimed and advanced by
/// the dispatchers. A subscription's secret is stored sealed under a key derived from the
/// master key, since it must be read back to sign.
public struct WebhookSubscriptions: WebhookSubscriptionStore {
    let store: EventStore
    let secretKey: DataKey
    let clock: any LedgerClock
    /// Whether subscription URLs may reach loopback, private, link-local and metadata addresses
    /// (`LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS`: tests, single-host setups).
    public let allowsPrivateNetworks: Bool

    public init(store: EventStore, masterKey: MasterKey, clock: any LedgerClock, allowsPrivateNetworks: Bool = false) throws {
        self.store = store
        self.secretKey = try DataKey(bytes: masterKey.derivedKey(label: KeyLabel.webhookSubscriptionSecret))
        self.clock = clock
        self.allowsPrivateNetworks = allowsPrivateNetworks
    }

    var client: PostgresClient { store.client }

    static let columns = """
        id, url, array_to_string(types, ','), created_at, cursor_tx::text, cursor_position, status, paused_reason,
        consecutive_failures, next_attempt_at, last_error, last_error_at, last_success_at, delivered_events, format,
        retry_through_tx::text, retry_through_position
        """

    /// How long a rotated secret keeps signing beside the new one.
    public static let rotationOverlap: TimeInterval = 86_400

    /// A new subscription following the feed from `after` (default: from now on), and the
    /// secret it signs with when none was given (generated, answered this once). Every broken
    /// rule is reported at once (`ValidationFailure`): an absolute http(s) URL whose host
    /// resolves to public addresses only (unless private networks are allowed), event types, a
    /// `whsec_` secret, a known format.
    public func create(
        url: String, types: [String]?, secret: String?, format: String? = nil, after: FeedCursor?
    ) async throws -> (subscription: WebhookSubscription, generatedSecret: WebhookSecret?) {
        var problems = Self.problems(url: url, types: types, secret: secret, format: format)
        // A name that does not resolve yet may later: it is judged again before every push.
        if !problems.contains(where: { $0.field == "url" }), case .refused(let reason) = await destination(of: url) {
            problems.insert(.init(field: "url", code: "private_address", message: reason), at: 0)
        }
        guard problems.isEmpty else { throw AccountService.ValidationFailure(problems: problems) }
        let generated = secret == nil ? try WebhookSecret.generate() : nil
        let signing = generated ?? WebhookSecret(unchecked: secret ?? "")
        let id = UUID.random()
        var start = FeedCursor.start
        if let after { start = after } else { start = try await store.headCursor() }
        let rows = try await client.query(
            """
            INSERT INTO webhook_subscriptions
                (id, url, types, secret_sealed, created_at, cursor_tx, cursor_position, next_attempt_at, format)
            VALUES ($1, $2, $3::text[], $4, $5, $6::xid8, $7, $5, $8)
            RETURNING \(Self.columns)
            """,
            [
                .uuid(id), .text(url), types.map { .textArray($0) } ?? .null,
                .bytea(try secretKey.seal(Array(signing.text.utf8), eventID: id)), .timestamp(clock.now()),
                .text(String(start.transactionID)), .int(start.position), .text(format ?? WebhookSubscription.Format.plain.rawValue),
            ])
        return (try Self.subscription(rows[0]), generated)
    }

    /// A new secret for the subscription, answered this once; the one it replaces keeps signing
    /// beside it for `rotationOverlap`, and so does the one an earlier rotation replaced, until
    /// its own overlap ends (a second rotation within a day must not cut the first one's promise
    /// short). At most those two sign beside the current one. Nil when there is no such subscription.
    public func rotateSecret(_ id: UUID) async throws -> WebhookSecret? {
        let secret = try WebhookSecret.generate()
        let now = clock.now()
        let rows = try await client.query(
            """
            UPDATE webhook_subscriptions
               SET earlier_secret_sealed = CASE WHEN previous_secret_until > $4 THEN previous_secret_sealed END,
                   earlier_secret_until = CASE WHEN previous_secret_until > $4 THEN previous_secret_until END,
                   previous_secret_sealed = secret_sealed, previous_secret_until = $3, secret_sealed = $2
             WHERE id = $1 AND deleted_at IS NULL
            """,
            [
                .uuid(id), .bytea(try secretKey.seal(Array(secret.text.utf8), eventID: id)),
                .timestamp(now.addingTimeInterval(Self.rotationOverlap)), .timestamp(now),
            ])
        return rows.affectedRows == 1 ? secret : nil
    }

    /// Where a push to a URL may go: judged when a subscription is made and again before every
    /// push, since a name can be pointed elsewhere after it was checked.
    public enum Destination: Sendable, Equatable {
        /// Private networks are allowed: connect as the URL says.
        case unchecked
        /// Connect to `address` (checked public) for `host`, and nowhere else: a name that
        /// resolves elsewhere by the time of the connection (DNS rebinding) changes nothing.
        case pinned(host: String, address: String)
        case unresolved
        case refused(String)
    }

    /// Resolves the URL's host once and judges every address it gives.
    public func destination(of url: String) async -> Destination {
        guard !allowsPrivateNetworks else { return .unchecked }
        // Subscriptions made before hosts were checked at creation meet the same rule here.
        guard let host = IPAddress.plainHost(ofURL: url) else { return .refused("The URL's host is not an address or a plain host name.") }
        let addresses = await IPAddress.resolve(host)
        guard let first = addresses.first else { return .unresolved }
        if addresses.contains(where: { !IPAddress.isPublic($0) }) {
            return .refused("The URL reaches a private, loopback, link-local or metadata address.")
        }
        return .pinned(host: host, address: first)
    }

    static func problems(url: String, types: [String]?, secret: String?, format: String?) -> [AccountService.ValidationFailure.Problem] {
        var problems: [AccountService.ValidationFailure.Problem] = []
        let parsed = URL(string: url)
        if url.count > 2000 || !["http", "https"].contains(parsed?.scheme?.lowercased() ?? "") || IPAddress.plainHost(ofURL: url) == nil {
            problems.append(
                .init(
                    field: "url", code: "invalid_url",
                    message: "Enter an absolute http or https URL whose host is an IP address or a plain host name."))
        }
        if let types, types.isEmpty || !types.allSatisfy(NewEvent.isValidType) {
            problems.append(.init(field: "types", code: "invalid_types", message: "List event types such as account.registered."))
        }
        if let secret, WebhookSecret(secret) == nil {
            problems.append(
                .init(
                    field: "secret", code: "invalid_secret",
                    message: "The secret must be whsec_ and the base64 of 24 to 64 random bytes, or left out to have one made."))
        }
        if let format, WebhookSubscription.Format(rawValue: format) == nil {
            problems.append(.init(field: "format", code: "invalid_format", message: "The format must be plain or cloudevents."))
        }
        return problems
    }

    /// The live (not deleted) subscription with this id.
    public func get(_ id: UUID) async throws -> WebhookSubscription? {
        let rows = try await client.query(
            "SELECT \(Self.columns) FROM webhook_subscriptions WHERE id = $1 AND deleted_at IS NULL", [.uuid(id)])
        return rows.rowCount == 1 ? try Self.subscription(rows[0]) : nil
    }

    public func list() async throws -> [WebhookSubscription] {
        try await client.query(
            "SELECT \(Self.columns) FROM webhook_subscriptions WHERE deleted_at IS NULL ORDER BY created_at, id"
        ).rows.map(Self.subscription)
    }

    /// Stops deliveries for good; false when there was no such subscription.
    public func delete(_ id: UUID) async throws -> Bool {
        try await client.query(
            "UPDATE webhook_subscriptions SET deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL",
            [.uuid(id), .timestamp(clock.now())]
        ).affectedRows == 1
    }

    /// Pauses, or resumes (failure count cleared, next attempt now); nil when there is no such subscription.
    public func setStatus(_ id: UUID, _ status: WebhookSubscription.Status, reason: String? = nil) async throws -> WebhookSubscription? {
        let rows = try await client.query(
            """
            UPDATE webhook_subscriptions
               SET status = $2, paused_reason = $3,
                   consecutive_failures = CASE WHEN $2 = 'active' THEN 0 ELSE consecutive_failures END,
                   next_attempt_at = CASE WHEN $2 = 'active' THEN $4 ELSE next_attempt_at END
             WHERE id = $1 AND deleted_at IS NULL
            RETURNING \(Self.columns)
            """,
            [.uuid(id), .text(status.rawValue), reason.map(PostgresParameter.text) ?? .null, .timestamp(clock.now())])
        return rows.rowCount == 1 ? try Self.subscription(rows[0]) : nil
    }

    /// Events after the subscription's cursor that it has not received (counted up to `cap`).
    public func lag(_ subscription: WebhookSubscription) async throws -> Int64 {
        try await lag(subscription, cap: 100_000)
    }

    /// `lag` counted up to `cap`.
    public func lag(_ subscription: WebhookSubscription, cap: Int) async throws -> Int64 {
        var parameters: [PostgresParameter] = [
            .text(String(subscription.cursor.transactionID)), .int(subscription.cursor.position), .int(Int64(cap)),
        ]
        var typeFilter = ""
        if let types = subscription.types {
            typeFilter = "WHERE event_type = ANY($4::text[])"
            parameters.append(.textArray(types))
        }
        // The type filter applies to the next `cap` events only: a rare type must not turn the
        // count into a scan of the whole feed (it runs at every /metrics scrape).
        let rows = try await client.query(
            """
            SELECT count(*) FROM (SELECT event_type FROM events
             WHERE (tx_id, global_position) > ($1::xid8, $2) ORDER BY tx_id, global_position LIMIT $3) AS behind
            \(typeFilter)
            """,
            parameters)
        return try rows[0].int(0) ?? 0
    }

    // MARK: - For the dispatchers

    /// A due subscription this dispatcher now holds for `lease`, with its secrets (the current
    /// one first, then the rotated ones still in their overlap); nil when none is due.
    /// The lease keeps other instances off it, so one sender at a time keeps commit order.
    /// `skipping` are subscriptions this pass already served (caught up), so it moves on.
    public func claimDue(
        owner: UUID, lease: TimeInterval, skipping: Set<UUID> = []
    ) async throws -> (WebhookSubscription, secrets: [WebhookSecret])? {
        let now = clock.now()
        let rows = try await client.query(
            """
            UPDATE webhook_subscriptions SET lease_owner = $1, lease_until = $3
             WHERE id = (SELECT id FROM webhook_subscriptions
                          WHERE deleted_at IS NULL AND status = 'active' AND next_attempt_at <= $2
                            AND (lease_until IS NULL OR lease_until < $2 OR lease_owner = $1)
                            AND id <> ALL ($4::uuid[])
                          ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED)
            RETURNING \(Self.columns), secret_sealed, CASE WHEN previous_secret_until > $2 THEN previous_secret_sealed END,
                      CASE WHEN earlier_secret_until > $2 THEN earlier_secret_sealed END
            """,
            [
                .uuid(owner), .timestamp(now), .timestamp(now.addingTimeInterval(lease)),
                .uuidArray(skipping),
            ])
        guard rows.rowCount == 1 else { return nil }
        let subscription = try Self.subscription(rows[0])
        let secrets = try openSecrets(rows[0], columns: [17, 18, 19], id: subscription.id)
        guard !secrets.isEmpty else { return nil }
        return (subscription, secrets)
    }

    /// A batch through `batchEnd` is about to be sent: a retry (after a failure, a lost lease or a
    /// crash) sends the same events, so it is the same message. False when the lease was lost.
    public func recordSending(_ id: UUID, owner: UUID, through batchEnd: FeedCursor) async throws -> Bool {
        try await client.query(
            """
            UPDATE webhook_subscriptions SET retry_through_tx = $3::xid8, retry_through_position = $4
             WHERE id = $1 AND lease_owner = $2
            """,
            [.uuid(id), .uuid(owner), .text(String(batchEnd.transactionID)), .int(batchEnd.position)]
        ).affectedRows == 1
    }

    /// A batch was acknowledged: the cursor moves past it, the failure count clears and the lease
    /// is renewed. Only the lease holder may move it. Answers the secrets to sign the next batch
    /// with (a rotation or the end of its overlap applies from the next batch on), or nil when the
    /// lease was lost or the subscription was since deleted or paused: the pusher stops.
    public func recordDelivered(
        _ id: UUID, owner: UUID, through cursor: FeedCursor, count: Int, lease: TimeInterval
    ) async throws -> [WebhookSecret]? {
        let now = clock.now()
        let rows = try await client.query(
            """
            UPDATE webhook_subscriptions
               SET cursor_tx = $3::xid8, cursor_position = $4, delivered_events = delivered_events + $5,
                   consecutive_failures = 0, last_success_at = $6, lease_until = $7,
                   retry_through_tx = NULL, retry_through_position = NULL
             WHERE id = $1 AND lease_owner = $2
            RETURNING deleted_at IS NULL AND status = 'active', secret_sealed,
                      CASE WHEN previous_secret_until > $6 THEN previous_secret_sealed END,
                      CASE WHEN earlier_secret_until > $6 THEN earlier_secret_sealed END
            """,
            [
                .uuid(id), .uuid(owner), .text(String(cursor.transactionID)), .int(cursor.position), .int(Int64(count)),
                .timestamp(now), .timestamp(now.addingTimeInterval(lease)),
            ])
        guard rows.rowCount == 1, try rows[0].bool(0) == true else { return nil }
        let secrets = try openSecrets(rows[0], columns: [1, 2, 3], id: id)
        return secrets.isEmpty ? nil : secrets
    }

    /// The sealed secrets in `columns` of `row` (NULLs skipped), opened.
    func openSecrets(_ row: PostgresRow, columns: [Int], id: UUID) throws -> [WebhookSecret] {
        var secrets: [WebhookSecret] = []
        for column in columns {
            guard let sealed = try row.bytes(column) else { continue }
            secrets.append(WebhookSecret(unchecked: String(decoding: try secretKey.open(sealed, eventID: id), as: UTF8.self)))
        }
        return secrets
    }

    /// A delivery failed: back off, and pause after `policy.pauseAfterFailures` in a row (the
    /// retry resends the batch `recordSending` noted).
    public func recordFailure(
        _ id: UUID, owner: UUID, error: String, policy: WebhookSubscription.Policy
    ) async throws {
        let now = clock.now()
        try await client.query(
            """
            UPDATE webhook_subscriptions
               SET consecutive_failures = consecutive_failures + 1, last_error = $3, last_error_at = $4::timestamptz,
                   next_attempt_at = $4::timestamptz + make_interval(secs => least($6::float8, $5::float8 * power(2, consecutive_failures))),
                   status = CASE WHEN consecutive_failures + 1 >= $7 THEN 'paused' ELSE status END,
                   paused_reason = CASE WHEN consecutive_failures + 1 >= $7 THEN 'failing' ELSE paused_reason END,
                   lease_owner = NULL, lease_until = NULL
             WHERE id = $1 AND lease_owner = $2
            """,
            [
                .uuid(id), .uuid(owner), .text(String(error.prefix(500))), .timestamp(now), .text(String(policy.initialBackoff)),
                .text(String(policy.maximumBackoff)), .int(Int64(policy.pauseAfterFailures)),
            ])
    }

    /// Gives the lease back once the subscription is caught up.
    public func release(_ id: UUID, owner: UUID) async throws {
        try await client.query(
            "UPDATE webhook_subscriptions SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2",
            [.uuid(id), .uuid(owner)])
    }

    static func subscription(_ row: PostgresRow) throws -> WebhookSubscription {
        guard let id = try row.uuid(0), let url = row.string(1), let createdAt = try row.date(3),
            let transaction = row.string(4).flatMap(UInt64.init), let position = try row.int(5),
            let status = row.string(6).flatMap(WebhookSubscription.Status.init(rawValue:)),
            let failures = try row.int(8), let nextAttempt = try row.date(9), let delivered = try row.int(13),
            let format = row.string(14).flatMap(WebhookSubscription.Format.init(rawValue:))
        else { throw PostgresError(.decoding, message: "a webhook_subscriptions row has an unexpected NULL") }
        return WebhookSubscription(
            id: id, url: url, types: row.string(2).map { $0.split(separator: ",").map(String.init) }, createdAt: createdAt,
            format: format,
            cursor: FeedCursor(transactionID: transaction, position: position), status: status, pausedReason: row.string(7),
            consecutiveFailures: Int(failures), nextAttemptAt: nextAttempt, lastError: row.string(10),
            lastErrorAt: try row.date(11), lastSuccessAt: try row.date(12), deliveredEvents: delivered,
            retryThrough: try row.int(16).flatMap { position in
                row.string(15).flatMap(UInt64.init).map { FeedCursor(transactionID: $0, position: position) }
            })
    }
}
