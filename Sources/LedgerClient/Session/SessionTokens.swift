import Foundation

/// What a signed-in device keeps of its session: the token pair, when the access token ends,
/// and the device token the service answers with every session (docs/api.md "Devices").
public struct SessionTokens: Codable, Hashable, Sendable {
    /// The account the session belongs to.
    public var accountID: String
    /// The session's id (as `GET /me/sessions` lists it).
    public var sessionID: String
    /// Sent as `Authorization: Bearer …` until `accessTokenExpiresAt`.
    public var accessToken: String
    /// Spent by the next refresh, which answers a new pair.
    public var refreshToken: String
    /// When the access token ends, by this device's clock.
    public var accessTokenExpiresAt: Date
    /// Sent back as `X-Device-Token`, so a later sign-in from this device is not a new device.
    public var deviceToken: String?

    /// A pair as the service answered it at `receivedAt`.
    public init(
        accountID: String, sessionID: String, accessToken: String, refreshToken: String, accessTokenExpiresAt: Date,
        deviceToken: String?
    ) {
        self.accountID = accountID
        self.sessionID = sessionID
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.deviceToken = deviceToken
    }

    /// The tokens of a session answer received at `receivedAt` (`expires_in` counts from then).
    public init(_ session: Components.Schemas.Session, receivedAt: Date) {
        self.init(
            accountID: session.accountId, sessionID: session.sessionId, accessToken: session.accessToken,
            refreshToken: session.refreshToken,
            accessTokenExpiresAt: receivedAt.addingTimeInterval(TimeInterval(session.expiresIn)),
            deviceToken: session.deviceToken)
    }
}
