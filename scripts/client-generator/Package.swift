// swift-tools-version:6.2
// Builds swift-openapi-generator for scripts/generate-client.sh only: neither the service's
// build nor an app's depends on this package.
import PackageDescription

let package = Package(
    name: "client-generator",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator.git", exact: "1.14.3")
    ]
)
