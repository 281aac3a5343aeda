// The store's values are part of its API: a target that imports the store sees them.
@_exported import LedgerEvents
