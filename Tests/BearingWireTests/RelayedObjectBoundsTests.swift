import BearingModel
import BearingWire
import XCTest

/// Numbers gpsd sends are converted to integers only within bounds: a PPS or TOFF whose `real_nsec` or
/// `real_sec` is out of range gives no time instead of trapping (which would take the daemon down).
final class RelayedObjectBoundsTests: XCTestCase {
    func testOutOfRangeRealTimeGivesNoTime() throws {
        for (sec, nsec) in [("1622548801", "1e300"), ("1622548801", "-1e300"), ("1622548801", "9.3e18"),
                            ("1e300", "0"), ("1622548801", "1000000000"), ("1622548801", "-1")] {
            let line = #"{"class":"PPS","device":"/dev/pps0","real_sec":\#(sec),"real_nsec":\#(nsec),"clock_sec":1,"clock_nsec":2}"#
            let object = try XCTUnwrap(RelayedObject(line: line), line)
            XCTAssertNil(object.time, line)
        }
        let good = try XCTUnwrap(RelayedObject(line: #"{"class":"TOFF","device":"d","real_sec":1622548801,"real_nsec":500000000}"#))
        XCTAssertEqual(good.time, GPSTimestamp(seconds: 1_622_548_801, nanoseconds: 500_000_000))
    }
}
