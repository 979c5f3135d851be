import BearingAgent
import XCTest

/// Replays the config fuzzing corpus (Fuzz/corpus/config, grown by `scripts/fuzz`) and the hand-written
/// seeds (Fuzz/seeds/config) through `AgentConfig.parse`, as Fuzz/Config/main.swift does, without
/// libFuzzer: each input gives a config or a ConfigError with a message, never a crash.
final class ConfigCorpusTests: XCTestCase {
    /// Tests/BearingAgentTests/ConfigCorpusTests.swift → the repository root.
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
                // As the fuzz target reads its input: UTF-8, bad sequences replaced.
                let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
                do throws(ConfigError) {
                    _ = try AgentConfig.parse(yaml: text, source: file.lastPathComponent)
                } catch {
                    XCTAssertFalse(error.message.isEmpty, "\(dir)/\(file.lastPathComponent): ConfigError with an empty message")
                }
                total += 1
            }
        }
        XCTAssertGreaterThan(total, 0)
    }
}
