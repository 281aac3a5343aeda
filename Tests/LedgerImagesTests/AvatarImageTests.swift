import Foundation
import LedgerImages
import NIOCore
import Testing

@Suite("The avatar's picture: libvips decodes, squares, strips and encodes it again")
struct AvatarImageTests {
    func fixture(_ name: String) throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"))
        return Array(try Data(contentsOf: url))
    }

    /// The JPEG's segments: marker and body, up to the image data.
    func segments(_ jpeg: [UInt8]) -> [(marker: UInt8, body: ArraySlice<UInt8>)] {
        var found: [(UInt8, ArraySlice<UInt8>)] = []
        var index = 2
        while index + 4 <= jpeg.count, jpeg[index] == 0xFF {
            let marker = jpeg[index + 1]
            let length = Int(jpeg[index + 2]) << 8 | Int(jpeg[index + 3])
            found.append((marker, jpeg[(index + 4)..<min(jpeg.count, index + 2 + length)]))
            if marker == 0xDA { break }  // start of scan: pixels follow
            index += 2 + length
        }
        return found
    }

    /// Width and height from the frame header.
    func size(_ jpeg: [UInt8]) -> (width: Int, height: Int)? {
        guard let frame = segments(jpeg).first(where: { [0xC0, 0xC1, 0xC2].contains($0.marker) })?.body else { return nil }
        let bytes = Array(frame)
        return (Int(bytes[3]) << 8 | Int(bytes[4]), Int(bytes[1]) << 8 | Int(bytes[2]))
    }

    @Test("a photo with a camera and a GPS position comes back a 512-pixel JPEG square with no metadata at all")
    func stripsMetadata() throws {
        let photo = try fixture("photo-gps.jpg")
        #expect(segments(photo).contains { $0.marker == 0xE1 })  // the fixture does carry EXIF
        let avatar = try AvatarImage.normalize(photo)
        #expect(avatar.starts(with: [0xFF, 0xD8, 0xFF]))
        #expect(size(avatar)! == (512, 512))
        // No APPn segment but JFIF's APP0 (no EXIF, XMP, ICC, Photoshop), and no comment.
        let kept = segments(avatar).map(\.marker)
        #expect(!kept.contains { (0xE1...0xEF).contains($0) || $0 == 0xFE }, "\(kept)")
        for text in ["LedgerCam", "Model X-1", "Exif", "GPS"] { #expect(!avatar.contains(subsequence: Array(text.utf8)), "\(text)") }
    }

    @Test("PNG with transparency and WebP are taken; a small picture is squared, never enlarged")
    func otherFormats() throws {
        #expect(size(try AvatarImage.normalize(try fixture("alpha.png")))! == (200, 200))
        #expect(size(try AvatarImage.normalize(try fixture("small.webp")))! == (60, 60))
    }

    @Test(
        "hostile files are refused: a decompression bomb, over 8000 pixels a side, truncated, a fake header, GIF, SVG, and over 5 MiB"
    )
    func hostile() throws {
        for name in ["bomb.png", "wide.jpg", "truncated.jpg", "fake.jpg", "tiny.gif", "page.svg"] {
            #expect(throws: AvatarImageError(.unsupported), "\(name)") { try AvatarImage.normalize(try fixture(name)) }
        }
        #expect(throws: AvatarImageError(.tooLarge)) {
            try AvatarImage.normalize([0xFF, 0xD8, 0xFF] + [UInt8](repeating: 0, count: 5 << 20))
        }
    }

    @Test("a polyglot (a JPEG with HTML and a ZIP after it) loses what it carried: only pixels cross")
    func polyglot() throws {
        let file = try fixture("polyglot.jpg")
        guard let avatar = try? AvatarImage.normalize(file) else { return }  // refused is as good
        for marker in [Array("<script>".utf8), [0x50, 0x4B, 0x03, 0x04], Array("payload".utf8)] {
            #expect(!avatar.contains(subsequence: marker), "\(marker)")
        }
    }

    @Test("at most the gate's limit of pictures are made or wait at once; the rest are told to try again")
    func concurrency() async throws {
        let photo = try fixture("photo-gps.jpg")
        let gate = AvatarImage.Gate(limit: 2)
        let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    do {
                        _ = try await gate.admit { try await AvatarImage.make(from: photo) }
                        return true
                    } catch let error as AvatarImageError where error.code == .busy {
                        return false
                    }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.contains(true) && outcomes.contains(false))
        #expect(outcomes.count == 40)
        #expect(AvatarImage.Gate().limit == 4 * System.coreCount)
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}
