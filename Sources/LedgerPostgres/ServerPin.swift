import Foundation
import Synchronization

/// The one server a pool's connections may reach (`PostgresClient.requireServer`): for the
/// readers' pool, the standby `StandbyMonitor` measured. libpq may spread a multi-host URL's
/// connections over several servers (a node rejoining first in the list); a measurement vouches
/// only for the server it was taken on.
final class ServerPin: Sendable {
    private struct State {
        var required: String?
        var onMismatch: (@Sendable (String) -> Void)?
    }

    private let state = Mutex(State())

    /// Whether connections learn their server when opened (someone watches for mismatches).
    var isActive: Bool { state.withLock { $0.onMismatch != nil } }

    var required: String? { state.withLock { $0.required } }

    /// Sets the required server; true when it changed.
    func require(_ identity: String?) -> Bool {
        state.withLock { state in
            defer { state.required = identity }
            return state.required != identity
        }
    }

    func onMismatch(_ handler: @escaping @Sendable (String) -> Void) {
        state.withLock { $0.onMismatch = handler }
    }

    /// Tells the watcher a connection reached `identity` instead.
    func mismatched(_ identity: String) {
        state.withLock { $0.onMismatch }?(identity)
    }

    /// The server a connection reached, as `host:port` of its own address.
    static let identityExpression =
        "coalesce(host(inet_server_addr()), 'local') || ':' || coalesce(inet_server_port()::text, current_setting('port'))"
    static let identityQuery = "SELECT " + identityExpression
}

extension PostgresClient {
    /// SQL for the server a connection reached, as `requireServer` compares it.
    public static var serverIdentityExpression: String { ServerPin.identityExpression }

    /// The server `requireServer` asked for, if any.
    public var requiredServer: String? { serverPin.required }
}
