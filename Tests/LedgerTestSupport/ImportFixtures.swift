import Foundation

/// Export files as Firebase, Auth0 and the ledger's JSON lines carry them, with password hashes
/// made by those systems' libraries (scripts/import-fixtures.py), and each record's password.
public enum ImportFixtures {
    /// The file's path: `firebase-users.json`, `firebase-hash-config.json` (or `.txt`, the
    /// console's form), `auth0-users.json`, `users.jsonl`.
    public static func path(_ name: String) -> String {
        guard let url = Bundle.module.url(forResource: "imports/" + name, withExtension: nil) else {
            preconditionFailure("no import fixture \(name): run scripts/import-fixtures.py")
        }
        return url.path
    }

    public static func data(_ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path(name)))
    }

    /// The password of each record that has one, by its external id.
    public static let passwords: [String: String] = {
        (try? JSONDecoder().decode([String: String].self, from: data("passwords.json"))) ?? [:]
    }()
}
