import FuzzChecks
import XCTest

/// Replays the fuzzing corpus of the request session (Fuzz/corpus/session, grown by `scripts/fuzz`)
/// and the hand-written seeds (Fuzz/seeds/session) through the fuzz target's checks, without libFuzzer:
/// no crash, every parsed request reads back from its `line`, a line that parses as one request with a
/// JSON argument gives exactly that request, and the same events whatever the read boundaries. The checks are the fuzz target's own (FuzzChecks).
final class FuzzCorpusTests: XCTestCase {
    /// Tests/BearingCoreTests/FuzzCorpusTests.swift → the repository root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testSessionCorpusAndSeedsReplay() throws {
        var total = 0
        for dir in ["Fuzz/corpus/session", "Fuzz/seeds/session"] {
            let files = try Self.files(in: dir)
            XCTAssertFalse(files.isEmpty, "\(dir) has no inputs")
            for file in files {
                let bytes = [UInt8](try Data(contentsOf: file))
                if let failure = SessionCheck.failure(bytes) {
                    XCTFail("\(dir)/\(file.lastPathComponent): \(failure)")
                }
                total += 1
            }
        }
        XCTAssertGreaterThan(total, 0)
    }

    static func files(in dir: String) throws -> [URL] {
        let url = root.appendingPathComponent(dir)
        return try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: [.isRegularFileKey])
            .filter { !$0.lastPathComponent.hasPrefix(".") && (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}
