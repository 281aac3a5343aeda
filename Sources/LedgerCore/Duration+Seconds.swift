extension Duration {
    /// The duration in seconds, as a floating-point number (for figures and rates).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in milliseconds, as a floating-point number.
    public var inMilliseconds: Double { inSeconds * 1000 }
}
