import FuzzChecks
import FuzzConfigChecks
import XCTest

/// Replays the config fuzzing corpus (Fuzz/corpus/config, grown by `scripts/fuzz`) and the hand-written
/// seeds (Fuzz/seeds/config) through the fuzz target's own check (FuzzChecks: `AgentConfig.parse`), without
/// libFuzzer: each input gives a config or a ConfigError with a message, never a crash.
final class ConfigCorpusTests: XCTestCase {
    /// Tests/BearingDaemonTests/ConfigCorpusTests.swift → the repository root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testConfigCorpusAndSeedsReplay() throws {
        var total = 0
        for dir in ["Fuzz/corpus/config", "Fuzz/seeds/config"] {
            let url = Self.root.appendingPathComponent(dir)
            let files = try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: [.isRegularFileKey])
                .filter { !$0.lastPathComponent.hasPrefix(".") && (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
            XCTAssertFalse(files.isEmpty, "\(dir) has no inputs")
            for file in files {
                if let failure = ConfigCheck.failure([UInt8](try Data(contentsOf: file))) {
                    XCTFail("\(dir)/\(file.lastPathComponent): \(failure)")
                }
                total += 1
            }
        }
        XCTAssertGreaterThan(total, 0)
    }
}
