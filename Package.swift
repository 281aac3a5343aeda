// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "account-ledger",
    // iOS and the other Apple platforms are for the client libraries (docs/clients.md).
    platforms: [.macOS(.v14), .iOS(.v15), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    products: [
        .executable(name: "ledger", targets: ["LedgerCLI"]),
        .executable(name: "ledger-bench", targets: ["LedgerBench"]),
        // The apps' client (URLSession), and its AsyncHTTPClient transport for servers.
        .library(name: "LedgerClient", targets: ["LedgerClient"]),
        .library(name: "LedgerClientAsyncHTTPClient", targets: ["LedgerClientAsyncHTTPClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "4.1.0"..<"6.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        // HTTPS served by the service itself (`LEDGER_TLS_CERT_FILE`): certificates reloaded per
        // handshake, their key pair checked before a reload is taken.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
    ],
    targets: [
        // C shims: system libraries found through pkg-config.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // Imported password hashes: bcrypt through libxcrypt's crypt_rn, Argon2 through the
        // reference libargon2 (Debian's libcrypt-dev and libargon2-dev).
        .systemLibrary(name: "CLibXCrypt", providers: [.apt(["libcrypt-dev"])]),
        .systemLibrary(name: "CArgon2", pkgConfig: "libargon2", providers: [.apt(["libargon2-dev"])]),
        // The avatar: decoded and re-encoded by libvips (Debian's libvips-dev), as imgproxy and sharp do.
        .systemLibrary(name: "CVips", pkgConfig: "vips", providers: [.apt(["libvips-dev"])]),
        // SMTP and its TLS, through Debian's libcurl (OpenSSL flavour).
        .systemLibrary(
            name: "CLibCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),

        // The avatar's picture through libvips: checked, decoded, squared, stripped, encoded again.
        .target(
            name: "LedgerImages",
            dependencies: [
                "CVips", "LedgerCore", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),

        // Foundation-level helpers every layer may use (clock, encodings).
        .target(
            name: "LedgerCore",
            dependencies: [.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
            swiftSettings: swiftSettings
        ),

        // PostgreSQL client on libpq: pool, transactions, typed errors, LISTEN/NOTIFY, local clusters.
        .target(
            name: "LedgerPostgres",
            dependencies: [
                "CLibPQ", "LedgerCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),

        // OpenSSL primitives: SHA-256, HMAC, AES-256-GCM, scrypt, random bytes, constant-time compare.
        .target(
            name: "LedgerCrypto", dependencies: ["COpenSSL", "CLibXCrypt", "CArgon2", "LedgerCore"], swiftSettings: swiftSettings),

        // The events as values (recorded and new events, cursors, metadata, the store's errors):
        // what use cases need of the store, without PostgreSQL.
        .target(
            name: "LedgerEvents",
            dependencies: ["LedgerCore", "LedgerCrypto"],
            swiftSettings: swiftSettings
        ),

        // The event store: append, read, cursor feed, hash chain, envelope encryption, migrations.
        .target(
            name: "LedgerEventStore",
            dependencies: [
                "LedgerCore", "LedgerPostgres", "LedgerCrypto", "LedgerEvents",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // The identity domain: events, state, decisions, rules. Pure: no database, no HTTP.
        .target(
            name: "LedgerIdentity",
            dependencies: ["LedgerCore", "LedgerCrypto"],
            exclude: ["Resources/ATTRIBUTION.md"],
            resources: [.copy("Resources/common-passwords.txt"), .copy("Resources/countries.json")],
            swiftSettings: swiftSettings
        ),

        // Use cases: accounts, sessions, passwords, codes, re-auth, providers (application layer).
        // They depend on repository protocols, never on PostgreSQL.
        .target(
            name: "LedgerAccounts",
            dependencies: [
                "LedgerCore", "LedgerCrypto", "LedgerEvents", "LedgerIdentity", "LedgerWebAuthn", "LedgerImages",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // RFC 6238 codes only (`TOTPCodes`).
                .product(name: "HummingbirdOTP", package: "hummingbird-auth"),
                // ES256 access tokens and their key set (`AccessTokenSigner`).
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            swiftSettings: swiftSettings
        ),

        // The use cases' PostgreSQL side: repositories, projectors, counters, API keys, subscriptions.
        .target(
            name: "LedgerAccountsPostgres",
            dependencies: ["LedgerCore", "LedgerPostgres", "LedgerCrypto", "LedgerEventStore", "LedgerIdentity", "LedgerAccounts"],
            swiftSettings: swiftSettings
        ),

        // Sign in with Apple and Google: ID tokens verified against the providers' JWKS.
        .target(
            name: "LedgerProviders",
            dependencies: [
                "LedgerCore", "LedgerCrypto", "LedgerIdentity", "LedgerAccounts",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // The ways messages leave: the sink protocol, templates, MIME, SMTP (libcurl), Twilio.
        .target(
            name: "LedgerDelivery",
            dependencies: [
                "CLibCurl", "LedgerCore", "LedgerIdentity", "LedgerAccounts",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            resources: [.copy("Resources/templates")],
            swiftSettings: swiftSettings
        ),

        // Background workers: delivery, event webhooks, the purge and the retention sweep.
        .target(
            name: "LedgerWorkers",
            dependencies: [
                "LedgerCore", "LedgerPostgres", "LedgerCrypto", "LedgerEventStore", "LedgerIdentity", "LedgerAccounts",
                "LedgerAccountsPostgres", "LedgerDelivery",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // HTTP API: buildApplication / buildRouter and the controllers.
        .target(
            name: "LedgerServer",
            dependencies: [
                // Controllers take protocols of lower layers (the feed's `FeedSource` too), so the
                // HTTP layer builds and tests without PostgreSQL.
                "LedgerCore", "LedgerCrypto", "LedgerEvents", "LedgerIdentity", "LedgerAccounts", "LedgerWebAuthn",
                "LedgerProviders", "LedgerImages",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            resources: [.copy("Resources/pages"), .copy("Resources/console"), .copy("Resources/errors")],
            swiftSettings: swiftSettings
        ),

        // The wiring: the configuration, the services built from it, and buildApplication /
        // buildRouter, which hand each controller what it needs.
        .target(
            name: "LedgerApp",
            dependencies: [
                "LedgerCore", "LedgerPostgres", "LedgerCrypto", "LedgerEvents", "LedgerEventStore", "LedgerIdentity",
                "LedgerAccounts", "LedgerAccountsPostgres", "LedgerProviders", "LedgerServer", "LedgerWebAuthn", "LedgerWorkers",
                "LedgerDelivery",
                .product(name: "Hummingbird", package: "hummingbird"),
                // HTTPS with HTTP/1.1 and HTTP/2 by ALPN (`LEDGER_TLS_CERT_FILE`).
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // WebAuthn relying party for passkeys: CBOR, COSE keys, authenticator data and the
        // registration and authentication ceremonies (§7.1, §7.2). No database, no HTTP.
        .target(
            name: "LedgerWebAuthn",
            dependencies: [
                "LedgerCore", "LedgerCrypto",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),

        // A software authenticator (ES256, EdDSA, RS256) for tests and the benchmark.
        .target(
            name: "LedgerWebAuthnTesting",
            dependencies: [
                "LedgerCore", "LedgerWebAuthn",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),

        // The `ledger` command.
        .executableTarget(
            name: "LedgerCLI",
            dependencies: [
                "LedgerCore", "LedgerPostgres", "LedgerCrypto", "LedgerEventStore", "LedgerServer", "LedgerApp", "LedgerAccounts",
                "LedgerIdentity", "LedgerWorkers", "LedgerProviders", "LedgerAccountsPostgres", "LedgerDelivery",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // The `ledger-bench` command: the benchmarks, apart from the service's binary.
        .executableTarget(
            name: "LedgerBench",
            dependencies: [
                "LedgerCore", "LedgerPostgres", "LedgerCrypto", "LedgerEventStore", "LedgerServer", "LedgerApp", "LedgerAccounts",
                "LedgerIdentity", "LedgerWorkers", "LedgerAccountsPostgres", "LedgerDelivery", "LedgerWebAuthn", "LedgerWebAuthnTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The Swift client apps add in one line: the code swift-openapi-generator made from
        // openapi.yaml (`Generated/`, committed; scripts/generate-client.sh) and `LedgerSession`.
        // Depends on nothing of the service.
        .target(
            name: "LedgerClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),

        // The client over AsyncHTTPClient, for servers; apps never build AsyncHTTPClient.
        .target(
            name: "LedgerClientAsyncHTTPClient",
            dependencies: [
                "LedgerClient",
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),

        .target(
            name: "LedgerTestSupport",
            dependencies: [
                "LedgerCore", "LedgerPostgres", "LedgerEventStore", "LedgerCrypto", "LedgerIdentity", "LedgerAccounts",
                "LedgerProviders",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            path: "Tests/LedgerTestSupport",
            resources: [.copy("Resources/imports")],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "LedgerCoreTests", dependencies: ["LedgerCore"], swiftSettings: swiftSettings),
        // The client without a network: the refresh state machine, token storage, the generated
        // code's digest. Against the live service: LedgerServerTests' `ClientEndToEndTests`.
        .testTarget(
            name: "LedgerClientTests",
            dependencies: [
                "LedgerClient", "LedgerCrypto", "LedgerCore",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerDeliveryTests",
            dependencies: [
                "LedgerDelivery", "LedgerAccounts", "LedgerCore", "LedgerTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerCryptoTests",
            dependencies: ["LedgerCrypto", "LedgerCore"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerIdentityTests",
            dependencies: ["LedgerIdentity", "LedgerCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerAccountsTests",
            dependencies: [
                "LedgerAccounts", "LedgerAccountsPostgres", "LedgerIdentity", "LedgerTestSupport", "LedgerEventStore", "LedgerCrypto",
                "LedgerWebAuthn", "LedgerWebAuthnTesting", .product(name: "JWTKit", package: "jwt-kit"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerWorkersTests",
            dependencies: [
                "LedgerWorkers", "LedgerAccounts", "LedgerAccountsPostgres", "LedgerTestSupport", "LedgerCrypto", "LedgerPostgres",
                "LedgerCore", "LedgerDelivery",
                "LedgerEventStore", "LedgerIdentity",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerPostgresTests",
            dependencies: ["LedgerPostgres", "LedgerTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerEventStoreTests",
            dependencies: [
                "LedgerEventStore", "LedgerTestSupport", "LedgerCrypto", "LedgerPostgres",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerServerTests",
            dependencies: [
                "LedgerServer", "LedgerApp", "LedgerTestSupport", "LedgerEventStore", "LedgerPostgres", "LedgerAccounts",
                "LedgerAccountsPostgres",
                "LedgerCrypto", "LedgerWorkers", "LedgerDelivery",
                "LedgerCore", "LedgerIdentity", "LedgerWebAuthn", "LedgerWebAuthnTesting",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                // HMAC, for forging an HS256 token in `JWTAccessTokenTests`.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                "LedgerClient", "LedgerClientAsyncHTTPClient",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ],
            swiftSettings: swiftSettings
        ),
        // Fault runs: the `ledger` executable killed and PostgreSQL restarted under load.
        .testTarget(
            name: "LedgerFaultTests",
            dependencies: [
                "LedgerTestSupport", "LedgerPostgres", "LedgerCrypto",
                // An account state only the services make (an Apple deletion a hold blocked), for `ledger purge`.
                "LedgerCore", "LedgerEventStore", "LedgerIdentity", "LedgerAccounts", "LedgerAccountsPostgres",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerImagesTests",
            dependencies: ["LedgerImages"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerWebAuthnTests",
            dependencies: [
                "LedgerWebAuthn", "LedgerWebAuthnTesting", "LedgerCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerProvidersTests",
            dependencies: [
                "LedgerProviders", "LedgerAccounts", "LedgerCore", "LedgerCrypto", "LedgerTestSupport",
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
