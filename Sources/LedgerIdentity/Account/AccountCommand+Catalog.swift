extension AccountCommand {
    /// The command's case name, as the event catalogue's `emittedBy` lists it.
    public var name: String {
        Mirror(reflecting: self).children.first?.label ?? String(describing: self)
    }

    /// The types of `events` (this command's decision) whose catalogue entry does not name this
    /// command: the hand-kept `emittedBy` lists have drifted. Every repository checks each
    /// decision with it in debug builds, so any test that runs a command checks the catalogue.
    public func undeclared(in events: [AccountEvent]) -> [String] {
        // A link that signs in appends its confirmation's events and a sign-in's.
        var names: Set = [name]
        if case .signInByLink(let confirmation, _) = self { names.formUnion([confirmation.name, "startSession"]) }
        return events.filter { names.isDisjoint(with: $0.kind.emittedBy) }.map(\.type)
    }
}
