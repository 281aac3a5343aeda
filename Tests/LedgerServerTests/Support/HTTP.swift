import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

// Calling the API in tests: JSON in and out, and every answer held to openapi.yaml.

/// Decodes a JSON object body.
func json(_ response: TestResponse) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
}

func jsonBody(_ object: [String: Any]) -> ByteBuffer {
    ByteBuffer(data: try! JSONSerialization.data(withJSONObject: object))
}

let jsonHeaders: HTTPFields = [.contentType: "application/json"]

func bearer(_ token: String) -> HTTPFields {
    [.authorization: "Bearer \(token)", .contentType: "application/json"]
}

/// An answer's status and JSON body (empty for bodiless answers).
struct Answer: @unchecked Sendable {
    let status: HTTPResponse.Status
    let body: [String: Any]
    let headers: HTTPFields
    var string: (String) -> String? { { body[$0] as? String } }
    /// A `422 validation_failed`'s rule codes (`errors[].code`), in order; empty for any other answer.
    var problemCodes: [String] {
        guard string("error") == "validation_failed" else { return [] }
        return (body["errors"] as? [[String: Any]])?.compactMap { $0["code"] as? String } ?? []
    }
}

func call(
    _ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ body: [String: Any]? = nil,
    token: String? = nil, reauth: String? = nil, from address: String? = nil, path: String? = nil, headers extra: HTTPFields = [:]
) async throws -> Answer {
    var headers: HTTPFields = token.map(bearer) ?? jsonHeaders
    headers.append(contentsOf: extra)
    if let reauth { headers[HTTPField.Name("X-Reauth-Token")!] = reauth }
    // The client's address, as a trusted proxy in front of a live server says it.
    if let address { headers[HTTPField.Name("X-Forwarded-For")!] = address }
    return try await client.execute(uri: uri, method: method, headers: headers, body: body.map(jsonBody)) { response in
        expectConforms(response, method.rawValue.lowercased(), path ?? String(uri.prefix { $0 != "?" }))
        let object = response.body.readableBytes == 0 ? [:] : try json(response)
        return Answer(status: response.status, body: object, headers: response.headers)
    }
}
