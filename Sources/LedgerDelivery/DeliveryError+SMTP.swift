import CLibCurl
import Foundation

extension DeliveryError {
    /// What a failed SMTP send means for the dispatcher (the contract's "Delivery" section):
    /// - TLS and certificate failures, a relay that will not start TLS, refused credentials
    ///   (535 and the other authentication replies) and a URL libcurl cannot use:
    ///   `configuration`, the operator's to fix;
    /// - an SMTP 4xx, or no usable answer at all (connection refused, reset, timed out):
    ///   `temporary`;
    /// - another 5xx (550 unknown user, 552 mailbox full, 553, 554 rejected…): `permanent`;
    ///   but 500 and 502–504 (the relay and libcurl do not understand each other) are
    ///   `configuration`.
    ///
    /// The description quotes the relay with every address, link and long number masked, and
    /// each of `secrets` (the recipient, the code, the link) removed: it is logged and listed by
    /// `ledger deliveries list --failed`. It never holds the password, which libcurl never
    /// echoes and no relay reply contains.
    init(smtp failure: SMTPTransferError, secrets: [String]) {
        let code = CURLcode(failure.curlCode)
        let curlText = SMTPReplyMask.mask(failure.message, secrets: secrets)
        let replyText = failure.reply.map { "SMTP \($0.code) from the relay: " + SMTPReplyMask.mask($0.text, secrets: secrets) }
        if code == CURLE_LOGIN_DENIED || code == CURLE_AUTH_ERROR {
            self.init(
                "the relay refused the credentials of LEDGER_SMTP_URL (\(replyText ?? curlText))", kind: .configuration)
        } else if code == CURLE_USE_SSL_FAILED {
            self.init(
                "the relay would not start TLS (STARTTLS refused or not offered: \(replyText ?? curlText)); nothing is sent in plain text",
                kind: .configuration)
        } else if Self.tlsFailures.contains(code.rawValue) {
            self.init(
                "TLS with the relay failed: \(curlText); its certificate must chain to LEDGER_SMTP_CA_FILE (or the system's trust "
                    + "store) and name the host of LEDGER_SMTP_URL", kind: .configuration)
        } else if [CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_NOT_BUILT_IN, CURLE_BAD_FUNCTION_ARGUMENT].contains(code) {
            self.init("libcurl cannot use LEDGER_SMTP_URL: \(curlText)", kind: .configuration)
        } else if let reply = failure.reply, reply.code >= 400, let replyText {
            self.init(replyText, kind: Self.kind(smtpCode: reply.code))
        } else {
            self.init("the relay could not be reached or stopped answering: \(curlText) (curl \(failure.curlCode))", kind: .temporary)
        }
    }

    /// A 4xx may pass; the relay's refusals of us are the operator's; other 5xx are final.
    static func kind(smtpCode code: Int) -> Kind {
        switch code {
        case 400..<500: .temporary
        case 500, 502, 503, 504, 530, 534, 535, 538: .configuration
        default: .permanent
        }
    }

    private static let tlsFailures: Set<UInt32> = Set(
        [
            CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
            CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_SHUTDOWN_FAILED,
            CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
            CURLE_SSL_CLIENTCERT,
        ].map(\.rawValue))
}

/// Masks what a relay's reply (or libcurl's message) may quote of a message: addresses, links,
/// long numbers and the message's own secrets.
enum SMTPReplyMask {
    static func mask(_ text: String, secrets: [String]) -> String {
        var masked = MIMEMessage.headerText(text)
        for secret in secrets where secret.count >= 4 {
            masked = masked.replacingOccurrences(of: secret, with: "<redacted>", options: .caseInsensitive)
        }
        masked = masked.replacing(try! Regex(#"<?[^\s<>]+@[^\s<>]+>?"#), with: "<address>")
        masked = masked.replacing(try! Regex(#"[A-Za-z][A-Za-z0-9+.-]*://\S+"#), with: "<link>")
        masked = masked.replacing(try! Regex(#"\d{6,}"#), with: "<number>")
        return masked.count > 300 ? String(masked.prefix(300)) + "…" : masked
    }
}
