import Hummingbird
import LedgerIdentity

extension Request {
    /// The readable device a sign-in comes from (`X-Device-Name`, else the `User-Agent`).
    var deviceLabel: String? {
        DeviceLabel.describe(deviceName: headers[.xDeviceName], userAgent: headers[.userAgent])
    }

    /// The `device_token` the client sent back (`X-Device-Token`), if any.
    var deviceToken: String? { headers[.xDeviceToken] }
}
