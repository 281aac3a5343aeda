import HTTPTypes

/// The headers the service reads beyond HTTP's standard ones.
extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
    static let xReauthToken = Self("X-Reauth-Token")!
    /// The app's own name for the device ("Ana's iPhone"), shown on the sessions screen.
    static let xDeviceName = Self("X-Device-Name")!
}
