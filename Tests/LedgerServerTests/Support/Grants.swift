import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

// "Verify it's you" grants, earned as the app would.

/// A re-auth grant by the emailed link (which also verifies the address).
func emailLinkGrant(_ client: some TestClientProtocol, _ db: some TestBackend, token access: String) async throws -> String {
    #expect(try await call(client, .post, "/auth/reauth/email-link", token: access).status == .accepted)
    let confirmed = try await call(
        client, .post, "/auth/reauth/email-link/confirm", ["token": try await outboxToken(db, template: "reauth_link")])
    return try #require(confirmed.string("reauth_token"))
}

/// A re-auth grant by a code texted to the account's own number.
func phoneGrant(_ client: some TestClientProtocol, _ db: some TestBackend, token access: String, phone: String) async throws -> String {
    let requestID = try await requestOTP(client, nil, purpose: "reauth", token: access)
    let answer = try await verifyOTP(client, requestID, try await otpCode(db, phone: phone), token: access)
    return try #require(answer.string("reauth_token"))
}

/// A re-auth grant by the account's password.
func passwordGrant(_ client: some TestClientProtocol, token access: String, password: String = "violet-harbor-91") async throws -> String {
    let answer = try await call(client, .post, "/auth/reauth/password", ["password": password], token: access)
    return try #require(answer.string("reauth_token"))
}
