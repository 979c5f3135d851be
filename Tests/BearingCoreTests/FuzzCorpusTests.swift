import BearingCore
import XCTest

/// Replays the fuzzing corpus of the request session (Fuzz/corpus/session, grown by `scripts/fuzz`)
/// and the hand-written seeds (Fuzz/seeds/session) through the fuzz target's checks, without libFuzzer:
/// no crash, every parsed request reads back from its `line`, a line that parses as one request with a
/// JSON argument gives exactly that request, and the same events whatever the read boundaries. Keep `SessionCorpusCheck` in step with `SessionCheck` in Fuzz/Session/main.swift.
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
                if let failure = SessionCorpusCheck.failure(bytes) {
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

/// The checks of Fuzz/Session/main.swift (an executable target, which tests cannot import).
enum SessionCorpusCheck {
    static let maxRequestBytes = 4096

    /// Where to cut `bytes` into 2–3 chunks: a function of the data only.
    static func splitPoints(_ bytes: [UInt8]) -> [Int] {
        let n = bytes.count
        guard n >= 2 else { return [] }
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes.prefix(16) { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        h ^= UInt64(n) &* 0x9e37_79b9_7f4a_7c15
        let first = 1 + Int(h % UInt64(n - 1))
        guard h & 0x100 != 0, first < n - 1 else { return [first] }
        let second = first + 1 + Int((h >> 16) % UInt64(n - 1 - first))
        return [first, second]
    }

    static func failure(_ bytes: [UInt8]) -> String? {
        var whole = ClientSession(maxRequestBytes: maxRequestBytes)
        let events = whole.receive(bytes)

        for case .request(let r) in events {
            var fresh = ClientSession(maxRequestBytes: Int.max)
            let back = fresh.receive(Array(r.line.utf8))
            if back != [.request(r)] {
                return "round trip: \(r) wrote \(r.line.debugDescription), which reads back as \(back)"
            }
        }

        // A line that reads as one request with a JSON argument gives exactly that request: a JSON
        // value has no `;` outside its strings, so the session must not split it. (Requests without an
        // argument ignore any `=…`, so `?POLL=1;?X` is two requests and is not checked here.)
        for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast()
        where line.count <= maxRequestBytes {
            guard let text = String(validating: line, as: UTF8.self),
                  let r = try? ClientRequest.parse(Substring(text)) else { continue }
            let trimmed = text.drop { $0 == " " || $0 == "\t" || $0 == "\r" }
            guard ["?WATCH=", "?PIPELINE=", "?CALIBRATION="].contains(where: { trimmed.hasPrefix($0) }) else { continue }
            var single = ClientSession(maxRequestBytes: maxRequestBytes)
            let got = single.receive(Array(line) + [0x0A])
            if got != [.request(r)] {
                return "one request: \(text.debugDescription) reads as \(r) alone but the session gives \(got)"
            }
        }

        let cuts = splitPoints(bytes)
        if !cuts.isEmpty {
            var chunked = ClientSession(maxRequestBytes: maxRequestBytes)
            var got: [ClientSession.Event] = []
            var start = 0
            for end in cuts + [bytes.count] {
                got += bytes[start..<end].withUnsafeBytes { chunked.receive($0) }
                start = end
            }
            if got != events {
                return "chunking at \(cuts) of \(bytes.count) bytes: one read gave \(events), chunks gave \(got)"
            }
        }
        return nil
    }
}
