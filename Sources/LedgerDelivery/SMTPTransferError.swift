import CLibCurl
import Foundation

/// A reply line of the relay (`550 5.1.1 <…>: Recipient address rejected`): its code and text.
struct SMTPReply: Sendable, Equatable {
    let code: Int
    /// After the code and its separator, without the line end.
    let text: String

    /// nil for a line that is not a reply (`NNN text` or `NNN-text`).
    init?(line: String) {
        let trimmed = line.trimmingCharacters(in: .newlines)
        let digits = trimmed.prefix(3)
        guard digits.count == 3, digits.allSatisfy({ ("0"..."9").contains($0) }), let code = Int(digits) else { return nil }
        let rest = trimmed.dropFirst(3)
        guard rest.isEmpty || rest.hasPrefix(" ") || rest.hasPrefix("-") else { return nil }
        self.code = code
        self.text = String(rest.dropFirst())
    }
}

/// A send libcurl gave up on: its `CURLcode`, its own message, and the relay's last reply.
/// Inside the module only: `DeliveryError(smtp:secrets:)` turns it into what the dispatcher
/// logs and counts, with addresses and secrets masked.
struct SMTPTransferError: Error, Sendable {
    let curlCode: UInt32
    /// libcurl's error buffer (or `curl_easy_strerror`): never holds the password.
    let message: String
    let reply: SMTPReply?
    /// The handle's kept connection was dead (closed while idle, or a 421): worth one more try
    /// on a fresh connection before anything is reported.
    let reusedDeadConnection: Bool

    init(curlCode: UInt32, message: String, reply: SMTPReply? = nil, reusedDeadConnection: Bool = false) {
        self.curlCode = curlCode
        self.message = message.isEmpty ? String(cString: curl_easy_strerror(CURLcode(curlCode))) : message
        self.reply = reply
        self.reusedDeadConnection = reusedDeadConnection
    }
}
