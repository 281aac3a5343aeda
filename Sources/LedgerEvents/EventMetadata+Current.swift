import Foundation

extension EventMetadata {
    /// What the work in progress records with the events it causes: set around an HTTP request
    /// (correlation id, client IP hash, user-agent class) or a background job (its actor), and
    /// read where the events are made, so no layer in between has to carry it.
    @TaskLocal public static var current = EventMetadata()

    /// This metadata, with `actor` when nobody named one (a request acting on its own account).
    public func withActor(default actor: String) -> EventMetadata {
        var metadata = self
        if metadata.actor == nil { metadata.actor = actor }
        return metadata
    }
}
