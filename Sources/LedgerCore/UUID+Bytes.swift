import Foundation

extension UUID {
    /// The 16 bytes of the UUID, in network order.
    public var bytes: [UInt8] {
        withUnsafeBytes(of: uuid) { Array($0) }
    }

    /// The UUID in lower case, as PostgreSQL prints it.
    public var lowercased: String { uuidString.lowercased() }
}
