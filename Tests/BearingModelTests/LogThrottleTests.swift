import BearingModel
import XCTest

final class LogThrottleTests: XCTestCase {
    /// The first at once, then one a minute with the count of those between; a quiet spell lets the next through.
    func testTheFirstAtOnceThenOneAnIntervalWithTheCountBetween() {
        var t = LogThrottle(interval: 60)
        XCTAssertTrue(t.isQuiet(at: 0))
        XCTAssertEqual(t.admit(at: 0), 0)
        XCTAssertFalse(t.isQuiet(at: 1))
        for s in stride(from: 1.0, to: 60, by: 1) { XCTAssertNil(t.admit(at: s), "at \(s) s") }
        XCTAssertEqual(t.admit(at: 60), 59)
        XCTAssertNil(t.admit(at: 100))
        XCTAssertTrue(t.isQuiet(at: 120))
        XCTAssertEqual(t.admit(at: 500), 1)
        XCTAssertEqual(t.last, 500)
    }
}
