#if canImport(Security)
    import Foundation
    import Security

    /// Tokens kept in the Keychain as one generic password item (JSON), readable after the
    /// device's first unlock and never synced or restored to another device.
    public struct KeychainTokenStorage: TokenStorage {
        /// The item's `kSecAttrService`, such as the app's bundle id.
        public let service: String
        /// The item's `kSecAttrAccount`.
        public let account: String
        /// A Keychain access group shared with app extensions, if any.
        public let accessGroup: String?

        /// Storage in the item `service` / `account`.
        public init(service: String, account: String = "ledger-session", accessGroup: String? = nil) {
            self.service = service
            self.account = account
            self.accessGroup = accessGroup
        }

        private var query: [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecAttrAccount as String: account,
            ]
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        public func load() async throws -> SessionTokens? {
            var read = query
            read[kSecReturnData as String] = true
            read[kSecMatchLimit as String] = kSecMatchLimitOne
            var item: CFTypeRef?
            let status = SecItemCopyMatching(read as CFDictionary, &item)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let data = item as? Data else {
                throw LedgerClientError(.storage, "The Keychain could not be read (OSStatus \(status)).")
            }
            return try JSONDecoder().decode(SessionTokens.self, from: data)
        }

        public func save(_ tokens: SessionTokens?) async throws {
            let deleted = SecItemDelete(query as CFDictionary)
            guard deleted == errSecSuccess || deleted == errSecItemNotFound else {
                throw LedgerClientError(.storage, "The Keychain item could not be removed (OSStatus \(deleted)).")
            }
            guard let tokens else { return }
            var item = query
            item[kSecValueData as String] = try JSONEncoder().encode(tokens)
            item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            let status = SecItemAdd(item as CFDictionary, nil)
            guard status == errSecSuccess else {
                throw LedgerClientError(.storage, "The Keychain item could not be written (OSStatus \(status)).")
            }
        }
    }
#endif
