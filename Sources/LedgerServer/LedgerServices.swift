import Foundation
import LedgerAccounts
import LedgerCore
import LedgerEventStore
import LedgerPostgres

/// What the routes need, built once at start-up and shared by every request.
public struct LedgerServices: Sendable {
    public let configuration: LedgerConfiguration
    public let client: PostgresClient
    public let eventStore: EventStore
    public let migrator: SchemaMigrator
    public let clock: any LedgerClock
    public let accounts: AccountService
    public let apiKeys: APIKeys
    /// The OpenAPI document to serve, when it was found.
    public var openAPI: OpenAPIController?

    public init(
        configuration: LedgerConfiguration, client: PostgresClient, eventStore: EventStore,
        migrator: SchemaMigrator, clock: any LedgerClock, accounts: AccountService
    ) {
        self.accounts = accounts
        self.apiKeys = APIKeys(client: client, clock: clock)
        self.openAPI = OpenAPIController.load()
        self.configuration = configuration
        self.client = client
        self.eventStore = eventStore
        self.migrator = migrator
        self.clock = clock
    }
}
