import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerCore
import LedgerCrypto
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

// Services, apps and signed-in accounts for the HTTP tests.

/// Signs in through the API and returns the access token.
func signIn(_ client: some TestClientProtocol, email: String) async throws -> String {
    try await client.execute(
        uri: "/auth/email/login", method: .post, headers: jsonHeaders,
        body: jsonBody(["email": email, "password": "violet-harbor-91"])
    ) { response in
        #expect(response.status == .ok)
        return try json(response)["access_token"] as? String ?? ""
    }
}

/// An email account (`ana@example.com`) with a phone added, so email + password is not its
/// only method; returns its access token. Adding the phone takes a grant by the emailed link,
/// which verifies the address too.
func accountWithPhone(_ client: some TestClientProtocol, _ db: some TestBackend) async throws -> String {
    let access = try await signUp(client, email: "ana@example.com")
    let grant = try await emailLinkGrant(client, db, token: access)
    let requestID = try await requestOTP(client, "+995511200300", purpose: "add_phone", token: access, reauth: grant)
    #expect(
        try await verifyOTP(client, requestID, try await otpCode(db, phone: "+995511200300"), token: access, reauth: grant).status == .ok)
    return access
}

/// Signs up through the API and returns the access token.
func signUp(_ client: some TestClientProtocol, email: String, handle: String? = nil) async throws -> String {
    var body: [String: Any] = ["email": email, "password": "violet-harbor-91"]
    if let handle { body["handle"] = handle }
    return try await client.execute(uri: "/auth/email/signup", method: .post, headers: jsonHeaders, body: jsonBody(body)) { response in
        #expect(response.status == .created)
        return try json(response)["access_token"] as? String ?? ""
    }
}

/// Signs in with email and password (`signUp`'s password by default) and returns the access token.
func logIn(_ client: some TestClientProtocol, email: String, password: String = "violet-harbor-91") async throws -> String {
    try await client.execute(
        uri: "/auth/email/login", method: .post, headers: jsonHeaders, body: jsonBody(["email": email, "password": password])
    ) { try json($0)["access_token"] as? String ?? "" }
}
