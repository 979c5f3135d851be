import BearingCompass
import XCTest

/// The course going straight at speed as a heading reference: learnt on a straight, held near its heading,
/// faded away from it and with time, blind to a GNSS jump or a reversing car.
final class CourseTrimTests: XCTestCase {
    func testAStraightsErrorIsLearntAndHeldOnlyNearItsHeading() {
        var t = CourseTrim()
        // A compass 4° short of the course on a straight heading 90°, course noise ±0.3°, 30 epochs.
        for k in 0..<30 {
            XCTAssertTrue(t.straightEpoch(course: 94 + 0.3 * sin(Double(k)), heading: 90, time: Double(k)))
        }
        XCTAssertEqual(t.trim(at: 90, time: 29), 4, accuracy: 0.2)
        XCTAssertEqual(t.trim(at: 105, time: 29), 2, accuracy: 0.1, "half way to the span")
        XCTAssertEqual(t.trim(at: 130, time: 29), 0, "another heading's error is not this one's")
        XCTAssertEqual(t.trim(at: 90, time: 29 + 120), 4 / M_E, accuracy: 0.1, "fades with time")
    }

    func testTheFirstEpochsOfAStraightAreTheirMeanAndAJumpIsNotTaken() {
        var t = CourseTrim()
        XCTAssertTrue(t.straightEpoch(course: 10, heading: 7, time: 0))
        XCTAssertEqual(t.trim(at: 7, time: 0), 3, accuracy: 1e-9)
        XCTAssertTrue(t.straightEpoch(course: 11, heading: 7, time: 1))
        // The mean of the two, the first faded by the second's second (holdTime 120 s).
        XCTAssertEqual(t.trim(at: 7, time: 1), 3.5, accuracy: 0.02)
        // A multipath jump of 25°, or a car reversing (180°): not taken.
        XCTAssertFalse(t.straightEpoch(course: 32, heading: 7, time: 2))
        XCTAssertFalse(t.straightEpoch(course: 190, heading: 7, time: 3))
        XCTAssertEqual(t.trim(at: 7, time: 3), 3.5, accuracy: 0.1)
    }

    func testAcrossNorthTheErrorIsTheShortWay() {
        var t = CourseTrim()
        t.straightEpoch(course: 1, heading: 358, time: 0)
        XCTAssertEqual(t.trim(at: 358, time: 0), 3, accuracy: 1e-9)
    }
}
