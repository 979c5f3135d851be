import BearingRecording
import XCTest

final class RecordTests: XCTestCase {
    func testKeyRecordsReplaceByIdentity() {
        XCTAssertEqual(Record.config("a").key, .config)
        XCTAssertEqual(Record.calibration(name: "level", content: nil).key, .calibration("level"))
        XCTAssertNil(Record.timer(due: 5).key)
        XCTAssertNil(Record.gpsd(Array("{}".utf8)).key)
    }
}
