import CLibPQ
import Foundation
import Synchronization

/// Waits for connections' sockets to become readable on one thread of its own (epoll), so a
/// statement can be sent from the task that runs it and its result awaited without parking a
/// thread per statement.
///
/// Handing every statement to a blocking thread cost a thread wake-up per statement (a
/// `pthread_cond_signal` into the thread pool and a context switch), which profiles of the
/// hot read endpoints showed as their largest single cost after the network itself.
final class SocketReadiness: Sendable {
    private let epoll: Int32
    private let wakeup: Int32
    private let waiters = Mutex<[Int32: CheckedContinuation<Bool, Never>]>([:])
    private let stopped = Mutex(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Nil when the process cannot get an epoll or eventfd descriptor (out of descriptors):
    /// the client then runs every statement on its blocking threads, as it did before.
    init?() {
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        let wakeup = eventfd(0, Int32(EFD_CLOEXEC))
        guard epoll >= 0, wakeup >= 0 else {
            if epoll >= 0 { close(epoll) }
            if wakeup >= 0 { close(wakeup) }
            return nil
        }
        self.epoll = epoll
        self.wakeup = wakeup
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: wakeup))
        epoll_ctl(epoll, EPOLL_CTL_ADD, wakeup, &event)
        let thread = Thread { [self] in run() }
        thread.name = "ledger-pg-readiness"
        thread.start()
    }

    /// Suspends until `socket` has something to read (or has failed: the caller's next libpq
    /// call finds out which). One waiter per socket at a time, as one task uses a connection.
    /// Throws `connectionLost` when the socket cannot be watched (closed), `poolClosed` once
    /// shut down (a statement sent while the client shuts down).
    func waitReadable(_ socket: Int32) async throws {
        var failure: Int32 = 0
        let armed = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            guard !stopped.withLock({ $0 }) else { return continuation.resume(returning: false) }
            waiters.withLock { $0[socket] = continuation }
            // One-shot, armed after the waiter is in place, so its event cannot come first.
            var event = epoll_event(events: EPOLLIN.rawValue | EPOLLONESHOT.rawValue, data: epoll_data_t(fd: socket))
            // MOD fails for a socket not registered yet, or registered under a number since reused.
            if epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event) != 0 && epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event) != 0 {
                failure = errno
                waiters.withLock { $0.removeValue(forKey: socket) }?.resume(returning: false)
            }
        }
        guard armed else {
            if stopped.withLock({ $0 }) { throw PostgresError(.poolClosed, message: "the connection pool is shut down") }
            throw PostgresError(.connectionLost, message: "the connection's socket \(socket) cannot be watched (errno \(failure))")
        }
    }

    /// Stops the thread; waiters still suspended are resumed, and their libpq calls then fail
    /// or succeed on their own.
    func shutdown() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        var one: UInt64 = 1
        _ = write(wakeup, &one, 8)
        finished.wait()
        for waiter in waiters.withLock({ waiters in
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }) {
            waiter.resume(returning: true)
        }
        close(epoll)
        close(wakeup)
    }

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        loop: while true {
            let count = epoll_wait(epoll, &events, Int32(events.count), -1)
            if count < 0 {
                if errno == EINTR { continue }
                break
            }
            for event in events.prefix(Int(count)) {
                let socket = event.data.fd
                if socket == wakeup { break loop }
                waiters.withLock { $0.removeValue(forKey: socket) }?.resume(returning: true)
            }
        }
        finished.signal()
    }
}
