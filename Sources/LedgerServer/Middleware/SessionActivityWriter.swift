import LedgerAccounts
import ServiceLifecycle

/// Writes the sessions' noted uses (`SessionActivity`) every second while the service runs,
/// and the last ones when it stops.
public struct SessionActivityWriter: Service {
    let activity: SessionActivity

    public init(activity: SessionActivity) {
        self.activity = activity
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                await activity.settle()
            }
        }
        await activity.settle()
    }
}
