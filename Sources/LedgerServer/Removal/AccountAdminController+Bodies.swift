import Foundation

/// `{reason}`.
struct DisableRequest: Decodable {
    let reason: String
}
