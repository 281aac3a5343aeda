/// Where a projector's rows go.
enum ProjectionTarget {
    /// The live tables, after a command: its events may change rows that earlier commands
    /// wrote, so rows are upserted and earlier links and requests are closed.
    case live
    /// The tables a rebuild has just emptied: every stream is projected once from its whole
    /// history, so each row is inserted exactly once and nothing earlier exists to update.
    case emptiedTables
}
