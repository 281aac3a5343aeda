import CLibCurl
import Foundation
import LedgerCore

/// One libcurl easy handle talking SMTP to the relay, and through it one connection that libcurl
/// keeps open between sends (it reuses a handle's connection to the same host), so a burst of
/// messages costs one TCP and TLS handshake and one AUTH.
///
/// `send` blocks its thread for up to the send timeout: it runs only on `SMTPConnectionPool`'s
/// threads, never on an event loop or Swift's cooperative pool. Used by one send at a time, it may
/// move between threads between sends (libcurl allows that, not concurrent use).
final class SMTPConnection: @unchecked Sendable {
    private let handle: UnsafeMutableRawPointer
    private let configuration: SMTPConfiguration
    private let url: String
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    /// Connections libcurl opened on this handle since the last `takeConnectionsOpened()`.
    private var connectionsOpened = 0

    init(configuration: SMTPConfiguration, heloName: String) throws {
        _ = SMTPConnection.initializeLibcurl
        guard let handle = curl_easy_init() else {
            throw SMTPTransferError(curlCode: CURLE_FAILED_INIT.rawValue, message: "curl_easy_init")
        }
        self.handle = handle
        self.configuration = configuration
        self.url = configuration.curlURL(heloName: heloName)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        do {
            try setUp()
        } catch {
            curl_easy_cleanup(handle)
            errorBuffer.deallocate()
            throw error
        }
    }

    deinit {
        // Sends QUIT on an open connection (bounded by the timeouts) and frees the handle.
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// libcurl's global state, set up once before any handle (`curl_global_init` is not safe to
    /// race with handles being made on other threads).
    private static let initializeLibcurl: Void = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }()

    /// The options every send shares.
    private func setUp() throws {
        try set(CURLOPT_URL, url)
        try set(CURLOPT_PROTOCOLS_STR, "smtp,smtps")
        // libcurl's timeouts would otherwise use SIGALRM, which is not safe in a threaded process.
        try set(CURLOPT_NOSIGNAL, 1)
        try set(CURLOPT_CONNECTTIMEOUT_MS, Int(configuration.connectTimeout.inSeconds * 1000))
        try set(CURLOPT_TIMEOUT_MS, Int(configuration.sendTimeout.inSeconds * 1000))
        try set(CURLOPT_SERVER_RESPONSE_TIMEOUT, max(1, Int(configuration.sendTimeout.inSeconds)))
        // A connection idle longer than this is not reused: relays drop idle clients after a while.
        try set(CURLOPT_MAXAGE_CONN, 60)
        switch configuration.security {
        case .startTLS, .implicitTLS:
            // STARTTLS or nothing: a relay that does not offer it (or a man in the middle who
            // strips it) fails the send instead of getting the credentials in plain text.
            try set(CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue))
            try set(CURLOPT_SSL_VERIFYPEER, 1)
            try set(CURLOPT_SSL_VERIFYHOST, 2)
            try set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
            if let caFile = configuration.caFile { try set(CURLOPT_CAINFO, caFile) }
        case .none:
            try set(CURLOPT_USE_SSL, Int(CURLUSESSL_NONE.rawValue))
        }
        if let username = configuration.username, let password = configuration.password {
            try set(CURLOPT_USERNAME, username)
            try set(CURLOPT_PASSWORD, password)
            // Over TLS, PLAIN or LOGIN, whichever the relay offers: what every relay supports.
            try set(CURLOPT_LOGIN_OPTIONS, "AUTH=PLAIN;AUTH=LOGIN")
        }
        try check(ledger_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
        try check(ledger_curl_setopt_read_function(handle, smtpReadCallback), "CURLOPT_READFUNCTION")
        try check(ledger_curl_setopt_header_function(handle, smtpReplyCallback), "CURLOPT_HEADERFUNCTION")
        try set(CURLOPT_UPLOAD, 1)
    }

    /// Sends `message` (CRLF lines, as `MIMEMessage.encoded()` makes it) from `sender` to
    /// `recipients`. Blocks. A connection found dead on reuse (the relay closed it while idle,
    /// or answered 421) is replaced once at once.
    func send(from sender: String, to recipients: [String], message: [UInt8]) throws {
        do {
            try perform(from: sender, to: recipients, message: message, fresh: false)
        } catch let failure as SMTPTransferError where failure.reusedDeadConnection {
            try perform(from: sender, to: recipients, message: message, fresh: true)
        }
    }

    /// Connections opened since the last call (0 when the sends reused the kept one).
    func takeConnectionsOpened() -> Int {
        defer { connectionsOpened = 0 }
        return connectionsOpened
    }

    private func perform(from sender: String, to recipients: [String], message: [UInt8], fresh: Bool) throws {
        let transfer = SMTPTransfer(message: message)
        var recipientList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(recipientList) }
        for recipient in recipients {
            guard let appended = curl_slist_append(recipientList, "<\(recipient)>") else {
                throw SMTPTransferError(curlCode: CURLE_OUT_OF_MEMORY.rawValue, message: "curl_slist_append")
            }
            recipientList = appended
        }
        errorBuffer[0] = 0
        let code: CURLcode = try withExtendedLifetime(transfer) {
            let pointer = Unmanaged.passUnretained(transfer).toOpaque()
            try set(CURLOPT_MAIL_FROM, "<\(sender)>")
            try check(ledger_curl_setopt_pointer(handle, CURLOPT_MAIL_RCPT, recipientList), "CURLOPT_MAIL_RCPT")
            try check(ledger_curl_setopt_pointer(handle, CURLOPT_READDATA, pointer), "CURLOPT_READDATA")
            try check(ledger_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, pointer), "CURLOPT_HEADERDATA")
            try set(CURLOPT_INFILESIZE, message.count)  // SIZE= in MAIL FROM, where offered
            try set(CURLOPT_FRESH_CONNECT, fresh ? 1 : 0)
            let code = curl_easy_perform(handle)
            // Nothing may point at `transfer` or the list once this returns.
            _ = ledger_curl_setopt_pointer(handle, CURLOPT_READDATA, nil)
            _ = ledger_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, nil)
            _ = ledger_curl_setopt_pointer(handle, CURLOPT_MAIL_RCPT, nil)
            return code
        }
        var connects = 0
        _ = ledger_curl_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &connects)
        connectionsOpened += connects
        guard code == CURLE_OK else {
            throw SMTPTransferError(
                curlCode: code.rawValue, message: String(cString: errorBuffer), reply: transfer.refusal,
                reusedDeadConnection: connects == 0 && !fresh && (transfer.replies == 0 || transfer.refusal?.code == 421))
        }
    }

    private func set(_ option: CURLoption, _ value: String) throws {
        try check(ledger_curl_setopt_string(handle, option, value), "\(option)")
    }

    private func set(_ option: CURLoption, _ value: Int) throws {
        try check(ledger_curl_setopt_long(handle, option, value), "\(option)")
    }

    private func check(_ code: CURLcode, _ what: String) throws {
        guard code == CURLE_OK else {
            throw SMTPTransferError(curlCode: code.rawValue, message: "\(what): \(String(cString: curl_easy_strerror(code)))")
        }
    }
}

/// One send's state shared with libcurl's callbacks: the bytes still to upload and what the
/// relay answered.
private final class SMTPTransfer {
    let message: [UInt8]
    var offset = 0
    /// Reply lines received during this send.
    var replies = 0
    /// The relay's last 4xx or 5xx: what a failed send reports (libcurl's QUIT after a refusal
    /// brings a `221` after it).
    var refusal: SMTPReply?

    init(message: [UInt8]) {
        self.message = message
    }
}

/// libcurl asks for the next piece of DATA; 0 ends it (libcurl adds the final `.` and the
/// dot-stuffing).
private func smtpReadCallback(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?)
    -> Int
{
    guard let buffer, let userdata else { return 0 }
    let transfer = Unmanaged<SMTPTransfer>.fromOpaque(userdata).takeUnretainedValue()
    let length = min(size * count, transfer.message.count - transfer.offset)
    guard length > 0 else { return 0 }
    transfer.message.withUnsafeBytes { bytes in
        UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + transfer.offset, byteCount: length)
    }
    transfer.offset += length
    return length
}

/// Each reply line of the relay; the last refusal is kept for the error of a failed send.
private func smtpReplyCallback(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?)
    -> Int
{
    let length = size * count
    guard let buffer, let userdata else { return length }
    let transfer = Unmanaged<SMTPTransfer>.fromOpaque(userdata).takeUnretainedValue()
    let line = String(decoding: UnsafeRawBufferPointer(start: buffer, count: min(length, 1024)), as: UTF8.self)
    transfer.replies += 1
    if let reply = SMTPReply(line: line), reply.code >= 400 { transfer.refusal = reply }
    return length
}
