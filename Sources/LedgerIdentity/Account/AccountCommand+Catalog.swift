extension AccountCommand {
    /// The command's case name, as the event catalogue's `emittedBy` lists it.
    public var name: String {
        Mirror(reflecting: self).children.first?.label ?? String(describing: self)
    }

    /// The types of `events` (this command's decision) whose catalogue entry does not name this
    /// command: the hand-kept `emittedBy` lists have drifted. Every repository checks each
    /// decision with it in debug builds, so any test that runs a command checks the catalogue.
    public func undeclared(in events: [AccountEvent]) -> [String] {
        let name = name
        return events.filter { !$0.kind.emittedBy.contains(name) }.map(\.type)
    }
}
