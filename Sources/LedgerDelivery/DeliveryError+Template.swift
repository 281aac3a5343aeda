extension DeliveryError {
    /// A template that cannot render is the operator's to fix (an override or a locale file):
    /// a configuration error, retried meanwhile, so no message is lost to a typo.
    public init(_ error: TemplateError) {
        self.init(error.description, kind: .configuration)
    }
}
