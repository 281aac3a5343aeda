import CLibCurl
import Testing

@testable import LedgerDelivery

@Suite("SMTP failures as delivery errors")
struct SMTPFailureTests {
    static func error(_ code: CURLcode, reply: String? = nil, secrets: [String] = []) -> DeliveryError {
        DeliveryError(
            smtp: SMTPTransferError(curlCode: code.rawValue, message: "", reply: reply.flatMap { SMTPReply(line: $0 + "\r\n") }),
            secrets: secrets)
    }

    @Test("4xx and network errors are temporary; authentication and TLS the operator's; other 5xx permanent")
    func kinds() {
        #expect(Self.error(CURLE_SEND_ERROR, reply: "451 4.3.0 Temporary lookup failure").kind == .temporary)
        #expect(Self.error(CURLE_WEIRD_SERVER_REPLY, reply: "421 4.7.0 Try again later").kind == .temporary)
        #expect(Self.error(CURLE_COULDNT_CONNECT).kind == .temporary)
        #expect(Self.error(CURLE_OPERATION_TIMEDOUT, reply: "250 OK").kind == .temporary)
        #expect(Self.error(CURLE_LOGIN_DENIED, reply: "535 5.7.8 Authentication credentials invalid").kind == .configuration)
        #expect(Self.error(CURLE_PEER_FAILED_VERIFICATION, reply: "220 Ready to start TLS").kind == .configuration)
        #expect(Self.error(CURLE_USE_SSL_FAILED, reply: "454 4.7.0 TLS not available").kind == .configuration)
        #expect(Self.error(CURLE_SEND_ERROR, reply: "530 5.7.0 Authentication required").kind == .configuration)
        for code in [550, 551, 552, 553, 554, 501] {
            #expect(Self.error(CURLE_SEND_ERROR, reply: "\(code) 5.0.0 no").kind == .permanent, "\(code)")
        }
        #expect(Self.error(CURLE_SEND_ERROR, reply: "502 5.5.1 Command not implemented").kind == .configuration)
    }

    @Test("the relay's text is quoted with addresses, links, long numbers and the message's secrets masked")
    func masked() {
        let error = Self.error(
            CURLE_WEIRD_SERVER_REPLY,
            reply: "554 5.7.1 <ana@example.com>: message with code 482915 and https://321.fit/verify?token=abc for Ana.Example rejected",
            secrets: ["Ana.Example", "482915"])
        #expect(
            error.description == "SMTP 554 from the relay: 5.7.1 <address>: message with code <redacted> and <link> for <redacted> rejected"
        )
        let numbers = Self.error(CURLE_SEND_ERROR, reply: "550 5.1.1 account 12345678 unknown")
        #expect(numbers.description == "SMTP 550 from the relay: 5.1.1 account <number> unknown")
    }

    @Test("reply lines: the code and the text of single and continued lines")
    func replyLines() {
        #expect(SMTPReply(line: "550 5.1.1 unknown\r\n") == SMTPReply(line: "550 5.1.1 unknown"))
        #expect(SMTPReply(line: "250-SIZE 10485760\r\n")?.text == "SIZE 10485760")
        #expect(SMTPReply(line: "334 \r\n")?.code == 334)
        #expect(SMTPReply(line: "hello") == nil)
        #expect(SMTPReply(line: "55 short") == nil)
    }
}
