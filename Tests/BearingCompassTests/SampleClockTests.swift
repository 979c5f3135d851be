@testable import BearingCompass
import XCTest

/// The fusion's own time from the samples' stamps (`SampleClock`): monotonic across a wall clock stepped back, and
/// nothing changed for samples a little out of order or a step forward.
final class SampleClockTests: XCTestCase {
    func testAStepBackIsTakenOutAndTheSamplesGoOnAtTheirInterval() {
        var clock = SampleClock()
        let before = (0..<5).map { clock.time(1000 + Double($0) * 0.01) }
        XCTAssertEqual(before, [1000, 1000.01, 1000.02, 1000.03, 1000.04].map { $0 }, "no step: the stamps as they are")
        // Stepped back by an hour between two samples 10 ms apart.
        let after = (5..<8).map { clock.time(1000 - 3600 + Double($0) * 0.01) }
        XCTAssertEqual(after[0], 1000.05, accuracy: 1e-9, "the sample after the step follows the latest by its interval")
        XCTAssertEqual(after[2] - after[1], 0.01, accuracy: 1e-9)
        XCTAssertEqual(clock.steps, 1)
        XCTAssertEqual(clock.shift, 3600, accuracy: 1e-9)
    }

    func testSamplesALittleOutOfOrderAndStepsForwardAreLeftAsTheyAre() {
        var clock = SampleClock()
        XCTAssertEqual(clock.time(10.0), 10.0)
        XCTAssertEqual(clock.time(10.3), 10.3)
        XCTAssertEqual(clock.time(9.9), 9.9, "0.4 s out of order (another reader's thread): no step")
        XCTAssertEqual(clock.time(3610.3), 3610.3, "a step forward is a gap")
        XCTAssertEqual(clock.steps, 0)
        XCTAssertEqual(clock.time(.nan).isNaN, true, "no time is no time")
        XCTAssertEqual(clock.time(3610.4), 3610.4)
    }

    /// A sample stamped before a step and handed over after one stamped after it: one gap the size of the step, once.
    func testAStampFromBeforeAStepHandedOverLateMakesOneGap() {
        var clock = SampleClock()
        _ = clock.time(100.00)
        _ = clock.time(100.01)
        let stepped = clock.time(100.02 - 60)  // the first stamp after a step back by 60 s
        XCTAssertEqual(stepped, 100.02, accuracy: 1e-9)
        let late = clock.time(100.015)  // stamped before the step, handed over now
        XCTAssertEqual(late, 160.015, accuracy: 1e-9, "a step ahead")
        let next = clock.time(100.03 - 60)
        XCTAssertEqual(next, 160.025, accuracy: 1e-9, "the time goes on from the late sample, as after a step forward")
        XCTAssertEqual(clock.time(100.04 - 60), 160.035, accuracy: 1e-9)
        XCTAssertEqual(clock.steps, 2)
    }
}
