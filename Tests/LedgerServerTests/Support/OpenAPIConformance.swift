import Foundation
import HummingbirdTesting
import LedgerIdentity
import Testing
import Yams

@testable import LedgerServer

/// The project's `openapi.yaml`, and a small JSON-Schema checker for the subset it uses
/// (`$ref`, `oneOf`, `enum`, `type` — one or a list —, `required`, `properties`, `additionalProperties: false`,
/// `const`, `items`, `maxLength`), so tests can hold every response to the document: JSON bodies, and
/// YAML ones (`/openapi.yaml`) as a client reads them after parsing.
struct OpenAPIDocument: @unchecked Sendable {
    /// Read once and never mutated.
    let root: [String: Any]

    static let shared: OpenAPIDocument = {
        // Tests/LedgerServerTests/Support/ → the repository's root.
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("openapi.yaml")
        let text = try! String(contentsOf: url, encoding: .utf8)
        return OpenAPIDocument(root: try! Yams.load(yaml: text) as! [String: Any])
    }()

    /// Problems with `response` as an answer to `method path`; empty when it conforms.
    /// A JSON body is checked against the schema of its own media type (`contentType`, e.g. a
    /// CloudEvents batch), else `application/json`'s.
    func problems(path: String, method: String, status: Int, body: Data, contentType: String? = nil) -> [String] {
        guard let operation = (root["paths"] as? [String: Any])?[path].flatMap({ ($0 as? [String: Any])?[method] }) as? [String: Any]
        else { return ["\(method.uppercased()) \(path) is not in openapi.yaml"] }
        guard var response = (operation["responses"] as? [String: Any])?[String(status)] as? [String: Any] else {
            return ["status \(status) of \(method.uppercased()) \(path) is not documented"]
        }
        response = resolve(response)
        guard let content = response["content"] as? [String: Any] else {
            return body.isEmpty ? [] : ["status \(status) documents no body, got \(body.count) bytes"]
        }
        let mediaType = contentType?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) }
        if let mediaType, mediaType != "application/json", mediaType.hasSuffix("+json") {
            guard let media = content[mediaType] as? [String: Any], let schema = media["schema"] as? [String: Any] else {
                return ["\(mediaType) is not documented for status \(status) of \(method.uppercased()) \(path)"]
            }
            guard let value = try? JSONDecoder().decode(JSONValue.self, from: body) else { return ["the body is not JSON"] }
            return validate(value, against: schema, at: "$")
        }
        if let media = content["application/json"] as? [String: Any], let schema = media["schema"] as? [String: Any] {
            guard let value = try? JSONDecoder().decode(JSONValue.self, from: body) else {
                return ["the body is not JSON"]
            }
            return validate(value, against: schema, at: "$")
        }
        if let media = content["application/yaml"] as? [String: Any], let schema = media["schema"] as? [String: Any] {
            guard let text = String(data: body, encoding: .utf8), let loaded = try? Yams.load(yaml: text) else {
                return ["the body is not YAML"]
            }
            return validate(Self.jsonValue(loaded), against: schema, at: "$")
        }
        return []
    }

    /// A loaded YAML value as JSON (what a client parsing the YAML gets).
    private static func jsonValue(_ value: Any?) -> JSONValue {
        switch value {
        case nil, is NSNull: return .null
        case let value as Bool: return .bool(value)
        case let value as Int: return .int(Int64(value))
        case let value as Double: return .double(value)
        case let value as String: return .string(value)
        case let value as [Any]: return .array(value.map { jsonValue($0) })
        case let value as [String: Any]: return .object(value.mapValues { jsonValue($0) })
        case let value?: return .string(String(describing: value))
        }
    }

    private func resolve(_ node: [String: Any]) -> [String: Any] {
        guard let reference = node["$ref"] as? String, reference.hasPrefix("#/") else { return node }
        var current: Any = root
        for part in reference.dropFirst(2).split(separator: "/") {
            current = (current as? [String: Any])?[String(part)] as Any
        }
        return resolve(current as? [String: Any] ?? [:])
    }

    func validate(_ value: JSONValue, against rawSchema: [String: Any], at location: String) -> [String] {
        let schema = resolve(rawSchema)
        var problems: [String] = []
        if let alternatives = schema["oneOf"] as? [[String: Any]] {
            let matching = alternatives.filter { validate(value, against: $0, at: location).isEmpty }.count
            if matching != 1 { problems.append("\(location): matches \(matching) of the oneOf alternatives, not exactly 1") }
        }
        if let allowed = schema["enum"] as? [Any] {
            // A `null` in the list is whatever YAML made of it: anything that is not a string.
            let texts = allowed.compactMap { $0 as? String }
            if case .string(let text) = value, !texts.contains(text) {
                problems.append("\(location): \(text) is not one of \(texts)")
            } else if case .null = value, texts.count == allowed.count {
                problems.append("\(location): null is not one of \(texts)")
            }
        }
        if let types = (schema["type"] as? [String]) ?? (schema["type"] as? String).map({ [$0] }) {
            guard types.contains(where: { Self.matches(value, type: $0) }) else {
                return ["\(location): expected \(types.joined(separator: "|")), got \(value)"]
            }
        }
        if let constant = schema["const"] as? String, value != .string(constant) {
            problems.append("\(location): expected \(constant)")
        }
        if let maxLength = schema["maxLength"] as? Int, case .string(let text) = value, text.count > maxLength {
            problems.append("\(location): longer than \(maxLength)")
        }
        if case .object(let object) = value {
            for key in schema["required"] as? [String] ?? [] where object[key] == nil {
                problems.append("\(location): missing \(key)")
            }
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for (key, child) in object {
                if let childSchema = properties[key] as? [String: Any] {
                    problems += validate(child, against: childSchema, at: "\(location).\(key)")
                } else if schema["additionalProperties"] as? Bool == false {
                    problems.append("\(location): undocumented field \(key)")
                }
            }
        }
        if case .array(let array) = value, let items = schema["items"] as? [String: Any] {
            for (index, element) in array.enumerated() {
                problems += validate(element, against: items, at: "\(location)[\(index)]")
            }
        }
        return problems
    }

    private static func matches(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("integer", .int), ("number", .int), ("number", .double),
            ("string", .string), ("array", .array), ("object", .object):
            return true
        default:
            return false
        }
    }
}

/// Checks a response against openapi.yaml.
func expectConforms(_ response: TestResponse, _ method: String, _ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let problems = OpenAPIDocument.shared.problems(
        path: path, method: method, status: Int(response.status.code), body: Data(buffer: response.body),
        contentType: response.headers[.contentType])
    #expect(problems.isEmpty, "\(method.uppercased()) \(path) → \(response.status.code): \(problems)", sourceLocation: sourceLocation)
    expectTranslated(response, sourceLocation: sourceLocation)
}

/// Every error message a test meets, and each field problem's, is in the catalogue of every
/// language (`ErrorMessages`): a message added without its Georgian and Russian fails the test
/// that first shows it.
func expectTranslated(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
    guard response.status.code >= 400, response.headers[.contentType]?.hasPrefix("application/json") == true,
        let body = try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any],
        let message = body["message"] as? String
    else { return }
    let problems = (body["errors"] as? [[String: Any]])?.compactMap { $0["message"] as? String } ?? []
    // A message already in Georgian or Russian was translated on the way out.
    let scripts: [ClosedRange<UInt32>] = [0x10D0...0x10FF, 0x0400...0x04FF]
    for text in [message] + problems
    where !text.unicodeScalars.contains(where: { scalar in scripts.contains { $0.contains(scalar.value) } }) {
        for language in [Language.ka, .ru] {
            #expect(
                ErrorMessages.builtIn.translation(of: text, to: language) != nil, "no \(language) for \"\(text)\"",
                sourceLocation: sourceLocation)
        }
    }
}
