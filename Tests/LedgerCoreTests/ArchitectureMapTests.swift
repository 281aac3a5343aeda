import Foundation
import Testing

/// docs/architecture.md stays true: every test and source file its tables name exists.
@Suite("docs/architecture.md")
struct ArchitectureMapTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../..").standardized

    static func swiftFiles(under folder: String) -> [URL] {
        let enumerator = FileManager.default.enumerator(at: root.appending(path: folder), includingPropertiesForKeys: nil)
        return (enumerator?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "swift" }
    }

    @Test("each `SuiteTests.test` and `SuiteTests` the map names is a test in Tests/, each `File.swift` a file in Sources/")
    func namesExist() throws {
        let map = try String(contentsOf: Self.root.appending(path: "docs/architecture.md"), encoding: .utf8)
        let tests = Self.swiftFiles(under: "Tests")
        let testSources = Dictionary(
            uniqueKeysWithValues: tests.map {
                ($0.deletingPathExtension().lastPathComponent, (try? String(contentsOf: $0, encoding: .utf8)) ?? "")
            })
        let sourceNames = Set(Self.swiftFiles(under: "Sources").map(\.lastPathComponent))

        var checked = 0
        for line in map.split(separator: "\n") {
            // In a table, code is named in the middle columns (`.refreshSession` is a command
            // there) and tests in the last one.
            let cells = line.hasPrefix("|") ? line.split(separator: "|") : [line]
            for (index, cell) in cells.enumerated() {
                checked += check(cell, tests: index == cells.count - 1, testSources: testSources, sourceNames: sourceNames)
            }
        }
        #expect(checked > 50)
    }

    @Test("the README's layout names every target Package.swift declares (test targets aside)")
    func layoutNamesEveryTarget() throws {
        let manifest = try String(contentsOf: Self.root.appending(path: "Package.swift"), encoding: .utf8)
        let readme = try String(contentsOf: Self.root.appending(path: "README.md"), encoding: .utf8)
        let layout = try #require(readme.firstRange(of: "Sources/ ")).lowerBound
        let end = try #require(readme[layout...].firstRange(of: "\n```")).lowerBound
        let block = readme[layout..<end]
        var targets: [String] = []
        for match in manifest.matches(of: /\.(target|executableTarget|systemLibrary)\(\s*name: "(\w+)"/) {
            targets.append(String(match.output.2))
        }
        #expect(targets.count > 15)
        for target in targets {
            #expect(block.contains(target), "README.md's layout does not name the target \(target)")
        }
    }

    /// Checks the names in one cell; returns how many it checked.
    func check(_ cell: Substring, tests: Bool, testSources: [String: String], sourceNames: Set<String>) -> Int {
        var suite = ""
        var checked = 0
        for match in cell.matches(of: /`(\.?)([\w+]+)(\.\w+)?`/) {
            let (_, dot, name, suffix) = match.output
            let member = suffix.map { $0.dropFirst() }
            checked += 1
            if member == "swift" {
                #expect(sourceNames.contains(name + ".swift"), "docs/architecture.md names \(name).swift, which is not in Sources/")
            } else if tests, !dot.isEmpty, !suite.isEmpty {
                // `.other` continues the last suite named: `ReauthTests.window`, `.otherSession`.
                #expect(
                    testSources[suite]?.contains("func \(name)(") == true,
                    "docs/architecture.md names \(suite).\(name), which is not a test")
            } else if name.hasSuffix("Tests") {
                suite = String(name)
                #expect(testSources[suite] != nil, "docs/architecture.md names \(suite), which is not a file in Tests/")
                if let member {
                    #expect(
                        testSources[suite]?.contains("func \(member)(") == true,
                        "docs/architecture.md names \(suite).\(member), which is not a test")
                }
            } else {
                checked -= 1
            }
        }
        return checked
    }
}
