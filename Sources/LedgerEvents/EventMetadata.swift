import Foundation
import LedgerCore
import LedgerCrypto

/// What is recorded about an event besides its payload. Never personal data: it stays
/// readable after a subject is purged.
public struct EventMetadata: Sendable, Hashable, Codable {
    /// Who caused the change: `account:<id>`, `service:<key id>`, `system:purge`.
    public var actor: String?
    public var correlationID: String?
    public var causationID: String?
    /// A hash of the client IP under the subject's data key (`DataKey.addressHash`), never the
    /// address itself; set at append from `clientAddress`.
    public var ipHash: String?
    /// The client's address while a request runs: never stored, turned into `ipHash` under
    /// the appended stream's subject key (nothing when the stream has no subject).
    public var clientAddress: String? = nil
    /// A coarse class such as `ios`, `android`, `web`, `service`.
    public var userAgentClass: String?

    public init(
        actor: String? = nil, correlationID: String? = nil, causationID: String? = nil,
        ipHash: String? = nil, userAgentClass: String? = nil
    ) {
        self.actor = actor
        self.correlationID = correlationID
        self.causationID = causationID
        self.ipHash = ipHash
        self.userAgentClass = userAgentClass
    }

    enum CodingKeys: String, CodingKey {
        case actor
        case correlationID = "correlation_id"
        case causationID = "causation_id"
        case ipHash = "ip_hash"
        case userAgentClass = "user_agent_class"
    }

    /// The fields present, by their JSON names, in alphabetical order: the one list `json`
    /// writes and the store prints as jsonb does (`storedText`).
    public var presentFields: [(key: String, value: String)] {
        let fields: [(key: String, value: String?)] = [
            ("actor", actor), ("causation_id", causationID), ("correlation_id", correlationID),
            ("ip_hash", ipHash), ("user_agent_class", userAgentClass),
        ]
        return fields.compactMap { field in field.value.map { (field.key, $0) } }
    }

    /// Compact JSON with sorted keys, absent fields left out (what `JSONEncoder` writes with
    /// `.sortedKeys`, rendered directly: every append renders it).
    public var json: String {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        for (key, value) in presentFields {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            bytes.appendJSONString(key)
            bytes.append(UInt8(ascii: ":"))
            bytes.appendJSONString(value)
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// As stored for a stream whose subject key is `key`: the client address replaced by its
    /// hash under that key.
    package func sealed(with key: DataKey?) -> EventMetadata {
        guard let address = clientAddress else { return self }
        var sealed = self
        sealed.clientAddress = nil
        sealed.ipHash = key.map { Hex.encode($0.addressHash(IPAddress.bytes(address) ?? Array(address.utf8))) }
        return sealed
    }

    /// Reads the stored JSON text; unknown fields are ignored.
    public init(json: String) {
        self = (try? JSONDecoder().decode(EventMetadata.self, from: Data(json.utf8))) ?? EventMetadata()
    }
}
