/// A configuration value that cannot be used: the service stops before it starts, naming the
/// variable (or the resource) at fault.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
