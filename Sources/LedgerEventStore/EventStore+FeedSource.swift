/// The store is the feed's source in production.
extension EventStore: FeedSource {}
