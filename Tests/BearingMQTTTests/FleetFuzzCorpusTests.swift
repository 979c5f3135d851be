import FuzzChecks
import TestSupport
import XCTest

/// Replays the fleet message fuzzer's corpus (Fuzz/corpus/fleet, grown by `scripts/fuzz fleet`) and the
/// hand-written seeds (Fuzz/seeds/fleet) through the fuzz target's checks, without libFuzzer (FleetCheck):
/// no crash; over the bound refused for its size alone; every refusal bounded, without control characters;
/// every accepted message printable, without a repeated key, and read back the same when written out.
final class FleetFuzzCorpusTests: XCTestCase {
    func testFleetCorpusAndSeedsReplay() throws {
        try FuzzCorpus.replay(target: "fleet", check: FleetCheck.failure)
    }

    /// The checks can fail: what today's parser refuses or once let through is caught.
    func testTheChecksCatchWhatTheyAreFor() {
        XCTAssertNotNil(FleetCheck.showable("a\u{1B}b", bound: 64))
        XCTAssertNotNil(FleetCheck.showable(String(repeating: "x", count: 65), bound: 64))
        XCTAssertNil(FleetCheck.showable("fleet pipelines \"v1\": mqtt.TPV[0] …", bound: 64))
        XCTAssertEqual(FleetCheck.firstRepeatedKey(.map([("a", .list([.map([("b", .null), ("b", .null)])]))]), at: ""), "/a/0/b")
        XCTAssertNil(FleetCheck.firstRepeatedKey(.map([("a", .map([("a", .null)]))]), at: ""))
        XCTAssertNil(FleetCheck.failure(Array(#"{"version":"v1","mqtt":{"TPV":[{"op":"throttle","interval":60}]}}"#.utf8)))
    }
}
