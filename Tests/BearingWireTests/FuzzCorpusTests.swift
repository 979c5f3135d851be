import FuzzChecks
import TestSupport
import XCTest

/// Replays the fuzzing corpus of the request session (Fuzz/corpus/session, grown by `scripts/fuzz`)
/// and the hand-written seeds (Fuzz/seeds/session) through the fuzz target's checks, without libFuzzer:
/// no crash, every parsed request reads back from its `line`, a line that parses as one request with a
/// JSON argument gives exactly that request, and the same events whatever the read boundaries. The checks are the fuzz target's own (FuzzChecks).
final class FuzzCorpusTests: XCTestCase {
    func testSessionCorpusAndSeedsReplay() throws {
        try FuzzCorpus.replay(target: "session", check: SessionCheck.failure)
    }
}
