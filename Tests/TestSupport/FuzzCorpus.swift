import Foundation
import XCTest

/// Replays a fuzz target's corpus and seeds through its checks, without libFuzzer.
public enum FuzzCorpus {
    /// Every file of Fuzz/corpus/TARGET and Fuzz/seeds/TARGET through `check`, each failure named with its
    /// file. The corpus may be missing before a campaign has run; the seeds never are.
    public static func replay(target: String, check: ([UInt8]) -> String?, file: StaticString = #filePath, line: UInt = #line) throws {
        var total = 0
        for dir in ["Fuzz/corpus/\(target)", "Fuzz/seeds/\(target)"] {
            let isCorpus = dir.hasPrefix("Fuzz/corpus")
            if isCorpus, !FileManager.default.fileExists(atPath: repoRoot.appendingPathComponent(dir).path) { continue }
            let files = try files(in: dir)
            if !isCorpus { XCTAssertFalse(files.isEmpty, "\(dir) has no inputs", file: file, line: line) }
            for f in files {
                if let failure = check([UInt8](try Data(contentsOf: f))) {
                    XCTFail("\(dir)/\(f.lastPathComponent): \(failure)", file: file, line: line)
                }
                total += 1
            }
        }
        XCTAssertGreaterThan(total, 0, file: file, line: line)
    }

    static func files(in dir: String) throws -> [URL] {
        let url = repoRoot.appendingPathComponent(dir)
        return try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: [.isRegularFileKey])
            .filter { !$0.lastPathComponent.hasPrefix(".") && (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}
