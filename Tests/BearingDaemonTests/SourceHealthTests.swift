@testable import BearingDaemon
import XCTest

/// A sensor's saturated samples in HEALTH and the journal: counted since the start, told at once, then at most
/// once a minute with the count between.
final class SourceHealthTests: XCTestCase {
    func testSaturationIsToldAtOnceThenAtMostOnceAMinute() {
        var h = SourceHealth()
        var lines: [(Double, String)] = []
        // 20 saturated samples a second for three minutes.
        for k in 0..<3600 {
            let t = 100 + Double(k) / 20
            if let line = h.saturatedSample(at: t, source: "magnetometer") { lines.append((t, line)) }
        }
        XCTAssertEqual(h.saturated, 3600)
        XCTAssertEqual(lines.count, 3, "\(lines)")
        XCTAssertEqual(lines[0].0, 100)
        XCTAssertTrue(lines[0].1.hasPrefix("magnetometer: an axis at the end of its range (saturated), 1 sample since the last line: a field beyond its range"), lines[0].1)
        XCTAssertTrue(lines[1].1.contains("1200 samples since the last line") && lines[1].1.hasSuffix("1201 since the start"), lines[1].1)
        XCTAssertEqual(lines[1].0 - lines[0].0, 60, accuracy: 0.06)
    }
}
