import Hummingbird
import LedgerAccounts
import LedgerIdentity

extension Request {
    /// The readable device a sign-in comes from (`X-Device-Name`, else the `User-Agent`).
    var deviceLabel: String? {
        DeviceLabel.describe(deviceName: headers[.xDeviceName], userAgent: headers[.userAgent])
    }

    /// The `device_token` the client sent back (`X-Device-Token`), if any.
    var deviceToken: String? { headers[.xDeviceToken] }

    /// The language the client asks messages in: the first `Accept-Language` entry as a plain
    /// tag (`en`, `pt-BR`), nil when it names none the templates could be filed under.
    var locale: String? { AcceptLanguage.preferredSupported(headers[.acceptLanguage]) }
}

extension Request {
    /// The device a sign-in comes from, as the services take it.
    var signInDevice: SignInDevice { SignInDevice(label: deviceLabel, token: deviceToken, locale: locale) }
}
