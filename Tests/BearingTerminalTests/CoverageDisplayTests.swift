import BearingTerminal
import XCTest

final class CoverageDisplayTests: XCTestCase {
    func testMapAndBar() {
        var c = Array(repeating: 0, count: 100)
        c[0] = 3; c[1] = 1
        let rows = CoverageDisplay.map(regionCounts: c)
        XCTAssertEqual(rows.count, 6)
        XCTAssertEqual(rows[0].trimmingCharacters(in: .whitespaces), "█")
        XCTAssertTrue(rows[1].trimmingCharacters(in: .whitespaces).hasPrefix("▒ ·"))
        XCTAssertEqual(rows[2].trimmingCharacters(in: .whitespaces).count, 34)
        XCTAssertEqual(CoverageDisplay.bar(50, total: 100, width: 10), "[█████░░░░░]")
    }
}
