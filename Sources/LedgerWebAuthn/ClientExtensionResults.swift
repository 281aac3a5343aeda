/// `clientExtensionResults` of a response. The service asks for no extension, so the content is
/// not read: any value decodes (browsers add `credProps` and others unasked) and it encodes as `{}`.
public struct ClientExtensionResults: Sendable, Codable, Hashable {
    public init() {}

    public init(from decoder: any Decoder) throws {}

    public func encode(to encoder: any Encoder) throws {
        _ = encoder.container(keyedBy: NoKeys.self)
    }

    private enum NoKeys: CodingKey {}
}
