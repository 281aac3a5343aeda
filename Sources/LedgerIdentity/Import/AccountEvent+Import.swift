import Foundation

/// The import area's event: an account that began in another system.
extension AccountEvent {
    /// The account came from `source`, where it was `external_id`; the events after it in the
    /// same commit say what it brought (address, password, phone, providers, name, disabled).
    public struct Imported: Codable, Sendable, Equatable {
        public var source: String
        public var externalID: String
        /// When the other system created the account, when it said.
        public var createdAt: Date?
        enum CodingKeys: String, CodingKey { case source, externalID = "external_id", createdAt = "created_at" }

        public init(source: String, externalID: String, createdAt: Date?) {
            self.source = source
            self.externalID = externalID
            self.createdAt = createdAt
        }
    }

    /// The import area's events in the catalogue (`AccountEvent.registry`).
    static let importRegistrations: [Registration] = [
        .init(.imported, Imported.self, AccountEvent.imported, emittedBy: ["importAccount"])
    ]
}
