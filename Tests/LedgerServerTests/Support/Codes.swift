import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

// Phone codes and email links as the tests read them from the outbox.

/// The newest queued message of a template: (recipient, token).
func outboxMessage(_ db: some TestBackend, template: String) async throws -> (to: String, token: String?) {
    let message = try #require(try await db.newestMessage(template: template, to: nil))
    return (message.to, message.token)
}

/// The newest queued token of a template (what the delivery sink would carry).
func outboxToken(_ db: some TestBackend, template: String) async throws -> String {
    try #require(try await db.newestMessage(template: template, to: nil)?.token)
}

/// The newest code texted to `phone` (what the delivery sink would carry).
func otpCode(_ db: some TestBackend, phone: String) async throws -> String {
    try #require(try await db.newestMessage(template: "otp", to: phone)?.code)
}

/// Requests a code and returns the request id (expecting 202).
func requestOTP(
    _ client: some TestClientProtocol, _ phone: String?, purpose: String = "sign_in", token: String? = nil, reauth: String? = nil
) async throws -> String {
    var body: [String: Any] = ["purpose": purpose]
    if let phone { body["phone"] = phone }
    let answer = try await call(client, .post, "/auth/phone/request-otp", body, token: token, reauth: reauth)
    #expect(answer.status == .accepted, "request-otp \(purpose): \(answer.body)")
    return try #require(answer.string("request_id"))
}

func verifyOTP(_ client: some TestClientProtocol, _ requestID: String, _ code: String, token: String? = nil, reauth: String? = nil)
    async throws -> Answer
{
    try await call(client, .post, "/auth/phone/verify-otp", ["request_id": requestID, "code": code], token: token, reauth: reauth)
}

/// Signs in (or up) by phone through the API; returns the access token.
func phoneSignIn(_ client: some TestClientProtocol, _ db: some TestBackend, _ phone: String) async throws -> String {
    let requestID = try await requestOTP(client, phone)
    let answer = try await verifyOTP(client, requestID, try await otpCode(db, phone: phone))
    #expect(answer.status == .ok)
    return try #require(answer.string("access_token"))
}

func wrongCode(_ code: String) -> String {
    code == "000000" ? "000001" : "000000"
}
