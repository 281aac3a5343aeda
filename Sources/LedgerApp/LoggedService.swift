import ServiceLifecycle

/// A service as the service group logs it: by its type's name alone. The group logs its members
/// at debug level, and a struct's default description prints every stored field: database URLs
/// with their passwords, the SMTP relay's and Twilio's credentials, webhook secrets.
struct LoggedService: Service, CustomStringConvertible {
    let service: any Service

    var description: String { String(describing: type(of: service)) }

    func run() async throws {
        // Graceful shutdown and cancellation reach the wrapped service through the task.
        try await service.run()
    }
}
