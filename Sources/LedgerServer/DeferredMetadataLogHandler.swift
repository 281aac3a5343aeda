import Logging

/// `StreamLogHandler` output, but metadata set on a logger is only kept, and rendered when a
/// line is written. `StreamLogHandler` renders its metadata on every change, and the server
/// changes a logger's metadata on every request (request ids) while writing a line for few of
/// them at the usual levels.
public struct DeferredMetadataLogHandler: LogHandler {
    private var output: StreamLogHandler
    public var metadata: Logger.Metadata = [:]

    public init(_ output: StreamLogHandler) {
        self.output = output
    }

    public var logLevel: Logger.Level {
        get { output.logLevel }
        set { output.logLevel = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { output.metadataProvider }
        set { output.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        guard !metadata.isEmpty else { return output.log(event: event) }
        var event = event
        // The logger's own metadata first, so a statement's metadata wins, as in StreamLogHandler.
        event.metadata = metadata.merging(event.metadata ?? [:]) { _, statement in statement }
        output.log(event: event)
    }
}
