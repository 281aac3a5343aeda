import Foundation

/// `{payload}`: the notification as Apple posts it, a JWS.
struct AppleNotificationRequest: Decodable {
    let payload: String
}
