import Foundation

/// The pictures `AvatarImageTests` decodes (Tests/LedgerImagesTests/Fixtures, made with Pillow),
/// for the tests that send them through the API.
public enum ImageFixtures {
    public static func bytes(_ name: String) throws -> [UInt8] {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        return Array(try Data(contentsOf: directory.appendingPathComponent("LedgerImagesTests/Fixtures/\(name)")))
    }
}
