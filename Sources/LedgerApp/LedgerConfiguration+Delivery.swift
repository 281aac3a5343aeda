import Foundation
import LedgerServer

extension LedgerConfiguration {
    /// Reads the delivery variables of docs/configuration.md (email, SMS and the purge).
    mutating func readDelivery(
        string: (String) -> String?, integer: (String, inout Int, Int, Int) throws -> Void
    ) throws {
        smtpURL = string("LEDGER_SMTP_URL")
        smtpCAFile = string("LEDGER_SMTP_CA_FILE")
        if let caFile = smtpCAFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw ConfigurationError("LEDGER_SMTP_CA_FILE: '\(caFile)' cannot be read")
        }
        emailFrom = string("LEDGER_EMAIL_FROM") ?? emailFrom
        guard emailFrom.contains("@"), !emailFrom.contains(where: \.isNewline) else {
            throw ConfigurationError("LEDGER_EMAIL_FROM must be an address, optionally with a name (\"321Fit <no-reply@321.fit>\")")
        }
        let twilioParts = [
            string("LEDGER_TWILIO_ACCOUNT_SID"), string("LEDGER_TWILIO_AUTH_TOKEN"), string("LEDGER_TWILIO_FROM"),
        ]
        if twilioParts.allSatisfy({ $0 != nil }), let sid = twilioParts[0], let token = twilioParts[1], let from = twilioParts[2] {
            var twilio = Twilio(accountSID: sid, authToken: token, from: from)
            if let base = string("LEDGER_TWILIO_BASE_URL") {
                guard base.hasPrefix("https://") || base.hasPrefix("http://"), URL(string: base)?.host != nil else {
                    throw ConfigurationError("LEDGER_TWILIO_BASE_URL must be an http(s) URL, got '\(base)'")
                }
                twilio.baseURL = base
            }
            self.twilio = twilio
        } else if twilioParts.contains(where: { $0 != nil }) {
            throw ConfigurationError(
                "LEDGER_TWILIO_ACCOUNT_SID, LEDGER_TWILIO_AUTH_TOKEN and LEDGER_TWILIO_FROM go together: set all three or none")
        }
        templatesDirectory = string("LEDGER_TEMPLATES_DIR")
        if let directory = templatesDirectory {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ConfigurationError("LEDGER_TEMPLATES_DIR: '\(directory)' is not a folder")
            }
        }
        brandName = string("LEDGER_BRAND_NAME") ?? productName
        brandURL = string("LEDGER_BRAND_URL") ?? brandURL
        brandColor = string("LEDGER_BRAND_COLOR") ?? brandColor
        guard brandColor.range(of: "^#[0-9A-Fa-f]{3}([0-9A-Fa-f]{3})?$", options: .regularExpression) != nil else {
            throw ConfigurationError("LEDGER_BRAND_COLOR must be a hex colour like #1d4ed8, got '\(brandColor)'")
        }
        // A day at most: a code or link older than that is no use to anyone.
        try integer("LEDGER_DELIVERY_RETRY_SECONDS", &deliveryRetrySeconds, 1, Self.day)
    }
}
