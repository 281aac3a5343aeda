import Foundation
import Testing

@testable import LedgerAccounts

@Suite("Hashing queue: sign-ins first, new passwords on part of the queue")
struct HashingQueueTests {
    /// Names in the order they got a thread.
    final class Order: @unchecked Sendable {
        private let lock = NSLock()
        private var names: [String] = []
        func append(_ name: String) { lock.withLock { names.append(name) } }
        var all: [String] { lock.withLock { names } }
    }

    @Test(
        "a freed thread goes to waiting sign-ins before new passwords; past their share new passwords, past the queue anyone, are refused at once"
    )
    func priorities() async throws {
        let queue = HashingQueue(threads: 1, queueLimit: 4, newPasswordLimit: 2)
        try await queue.enter(.signIn)
        let order = Order()
        var tasks: [Task<Void, any Error>] = []
        /// Starts a waiter and returns once it is queued.
        func wait(_ name: String, _ priority: HashingQueue.Priority) async throws {
            let before = queue.load.waiting.reduce(0, +)
            tasks.append(
                Task {
                    try await queue.enter(priority)
                    order.append(name)
                    queue.leave()
                })
            while queue.load.waiting.reduce(0, +) == before { try await Task.sleep(for: .milliseconds(1)) }
        }
        try await wait("signup-1", .newPassword)
        try await wait("signup-2", .newPassword)
        // New passwords have had their share: the third is refused, sign-ins still wait.
        #expect(!queue.hasRoom(for: .newPassword) && queue.hasRoom(for: .signIn))
        await #expect(throws: PasswordHasherError.overloaded) { try await queue.enter(.newPassword) }
        try await wait("login-1", .signIn)
        try await wait("login-2", .signIn)
        // The queue is full for everyone.
        #expect(!queue.hasRoom(for: .signIn))
        await #expect(throws: PasswordHasherError.overloaded) { try await queue.enter(.signIn) }
        #expect(queue.load.running == 1 && queue.load.waiting == [2, 2])
        queue.leave()
        for task in tasks { try await task.value }
        #expect(order.all == ["login-1", "login-2", "signup-1", "signup-2"])
        #expect(queue.load.running == 0 && queue.load.waiting == [0, 0])
    }

    @Test("the admission rules without threads: run, wait or refuse; a freed thread goes to the oldest sign-in first")
    func admissionStateMachine() {
        var admission = HashingQueue.Admission<String>(threads: 1, queueLimit: 3, newPasswordLimit: 1)
        let decisions = [
            admission.enter(.newPassword, "a"), admission.enter(.newPassword, "b"), admission.enter(.newPassword, "c"),
            admission.enter(.signIn, "d"), admission.enter(.signIn, "e"),
        ]
        #expect(decisions == [.run, .wait, .refuse, .wait, .wait])
        #expect(!admission.hasRoom(for: .signIn))
        let refused = admission.enter(.signIn, "f")
        #expect(refused == .refuse)
        let handedOver = [admission.leave(), admission.leave(), admission.leave()]
        #expect(handedOver == ["d", "e", "b"])
        #expect(admission.running == 1)
        let freed = admission.leave()
        #expect(freed == nil)
        #expect(admission.running == 0)
    }
}
