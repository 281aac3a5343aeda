import ArgumentParser
import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerApp
import LedgerCore
import LedgerCrypto
import LedgerIdentity
import LedgerServer
import Logging

/// `ledger staff add|list|remove`: the people who sign in to the support console
/// (docs/support.md "The console").
struct StaffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "staff", abstract: "Manage the support console's staff.", subcommands: [Add.self, List.self, Remove.self])

    /// Runs `body` with the console on the configured database.
    static func withConsole<T: Sendable>(_ database: DatabaseOptions, _ body: (StaffConsole) async throws -> T) async throws -> T {
        Ledger.bootstrapLogging()
        let configuration = try LedgerConfiguration.fromEnvironment()
        guard let origin = configuration.consoleOrigin else {
            throw ConfigurationError("set LEDGER_CONSOLE_ORIGIN (such as https://support.321.fit): the console's address")
        }
        let masterKey = try MasterKeySource.load(configuration, allowDevelopmentKey: false, logger: Logger(label: "ledger.staff"))
        return try await database.withStore(configuration) { store in
            let environment = AccountsEnvironment.postgres(
                store: store, clock: SystemClock(), policies: configuration.policies,
                retention: configuration.retention(masterKey: masterKey),
                hasher: try PasswordHasher(parameters: Scrypt(logN: 4)))
            let console = StaffConsole(
                staff: PostgresStaffRepository(store: store, clock: SystemClock()), environment: environment, origin: origin,
                relyingPartyName: "\(configuration.productName) support", masterKey: masterKey,
                spent: PostgresSpentChallenges(client: store.client))
            return try await body(console)
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Invite a person: an email with a link (24 hours) that registers their passkey. Again, before they have, a new link.")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "Their email address.") var email: String
        @Option(help: "support (search, look, sign out, reset links) or admin (also two-factor resets, removals, disabling).")
        var role: String
        @Flag(help: "Print the link too (when no mail goes out, as in development).") var printLink = false

        func validate() throws {
            guard StaffRole(rawValue: role) != nil else { throw ValidationError("--role must be support or admin") }
        }

        func run() async throws {
            let role = StaffRole(rawValue: role) ?? .support
            let (staffID, link) = try await StaffCommand.withConsole(database) { try await $0.invite(email: email, role: role) }
            print("invited \(email) as \(role.rawValue) (staff \(staffID.lowercased)); the link lasts 24 hours")
            if printLink { print(link) }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the staff: address, role, state, live sessions.")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let now = Date()
            let lines = try await StaffCommand.withConsole(database) { console in
                try await console.list().map { staff in
                    let state =
                        staff.isRemoved ? "removed" : staff.passkeys.isEmpty ? "invited" : "active"
                    let sessions = staff.sessions.values.filter { $0.isLive(at: now) }.count
                    return "\(staff.email ?? "")  \(staff.role.rawValue)  \(state)  \(sessions) session(s)"
                }
            }
            for line in lines { print(line) }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a staff member: every console session of theirs ends at once.")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "Their email address.") var email: String

        func run() async throws {
            guard let removed = try await StaffCommand.withConsole(database, { try await $0.remove(email: email) }) else {
                throw ValidationError("nobody on staff has the address \(email)")
            }
            print("removed \(removed.email ?? email); \(removed.sessions.count) session(s) ended or closed")
        }
    }
}
