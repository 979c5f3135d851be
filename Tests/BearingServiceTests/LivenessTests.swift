import BearingPOSIX
import BearingService
import XCTest

final class LivenessTests: XCTestCase {
    func testACountThatStopsIsStuckAfterTheLimitAndRecovers() {
        var l = Liveness(limit: 1)
        XCTAssertEqual(l.stuck([.progress("queue", 1)], now: 0), [])
        XCTAssertEqual(l.stuck([.progress("queue", 2)], now: 0.9), [])
        XCTAssertEqual(l.stuck([.progress("queue", 2)], now: 1.8), [], "0.9 s since the last change")
        XCTAssertEqual(l.stuck([.progress("queue", 2)], now: 2.0), ["queue: no progress for 1.1 s"])
        XCTAssertEqual(l.stuck([.progress("queue", 3)], now: 2.1), [], "progress again")
    }

    func testACallHeldTooLongIsStuck() {
        var l = Liveness(limit: 2)
        XCTAssertEqual(l.stuck([.call("gpsd", since: nil)], now: 100), [], "between calls")
        XCTAssertEqual(l.stuck([.call("gpsd", since: 99)], now: 100), [])
        XCTAssertEqual(l.stuck([.call("gpsd", since: 97.5), .progress("loop", 5)], now: 100), ["gpsd: inside one call for 2.5 s"])
    }
}
