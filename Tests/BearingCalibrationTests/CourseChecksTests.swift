import BearingCalibration
import BearingModel
import BearingOnlineCalibration
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `CourseChecks`: the course on straight epochs judging a calibration. The raw field is built here from the
/// field's north-east-down components turned by the heading (not from the code's own formula), the sensor
/// z-down with x forward.
final class CourseChecksTests: XCTestCase {
    /// Sydney's field, roughly: 25 µT horizontal, 50 µT down... (dip about -64°: up, in the south).
    static let horizontal = 25.0, vertical = -51.0
    static let hardIron = Vector3(12, -30, 8)
    static let up = Vector3(0, 0, -1), forward = Vector3(1, 0, 0)

    /// The raw field of a level sensor whose x axis heads `heading` degrees magnetic.
    static func raw(heading: Double) -> Vector3 {
        let h = heading * .pi / 180
        // North (H, 0, Z) in the world's north-east-down axes, seen from a body turned by h about down.
        return Vector3(horizontal * cos(h), -horizontal * sin(h), vertical) + hardIron
    }

    /// Epochs every second, `samples` field samples each, on each course given (the heading `mounting` degrees off
    /// it: the sensor's yaw in the car), `time` counting on.
    static func drive(_ checks: inout CourseChecks, courses: [Double], mounting: Double = 0, from start: Double = 0,
                      epochsEach: Int = 3) -> Double {
        var t = start
        checks.epoch(course: nil, up: up, forward: forward, time: t)
        for course in courses {
            for _ in 0..<epochsEach {
                for k in 1...10 { checks.sample(raw(heading: course + mounting), time: t + Double(k) / 10) }
                t += 1
                checks.epoch(course: course, up: up, forward: forward, time: t)
            }
        }
        return t
    }

    func testTheRightCalibrationAgreesWithTheCourseWhateverTheMountingsYaw() throws {
        var checks = CourseChecks()
        let t = Self.drive(&checks, courses: [10, 100, 190, 280], mounting: 3)
        let right = MagneticCalibration(offset: Self.hardIron, matrix: .identity)
        XCTAssertEqual(try XCTUnwrap(checks.spread(right, at: t)), 0, accuracy: 1e-6)
    }

    /// A horizontal hard iron off by δ turns the heading by asin(δ·sin(ψ − θ)/H) (θ the error's direction): on four
    /// courses 90° apart its RMS is that of the four values.
    func testAHardIronOffByFiveMicroteslaSpreadsTheHeadingAsItsGeometrySays() throws {
        var checks = CourseChecks()
        let courses = [10.0, 100, 190, 280]
        let t = Self.drive(&checks, courses: courses, mounting: -2)
        let wrong = MagneticCalibration(offset: Self.hardIron + Vector3(5, 0, 0), matrix: .identity)
        // The calibrated field is the true one less (5, 0, 0) in the sensor's axes: its heading, computed here from
        // the components, against the course.
        let errors = courses.map { c -> Double in
            let h = c * .pi / 180
            let bx = Self.horizontal * cos(h) - 5, by = -Self.horizontal * sin(h)
            return remainder(c - atan2(-by, bx) * 180 / .pi, 360)
        }
        let mean = errors.reduce(0, +) / Double(errors.count)
        let expected = (errors.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(errors.count)).squareRoot()
        XCTAssertGreaterThan(expected, 7)
        XCTAssertEqual(try XCTUnwrap(checks.spread(wrong, at: t)), expected, accuracy: 0.05)
    }

    func testNoJudgementUntilTheCoursesCoverFourSectors() {
        var checks = CourseChecks()
        let right = MagneticCalibration(offset: Self.hardIron, matrix: .identity)
        var t = Self.drive(&checks, courses: [10, 100, 190], epochsEach: 20)
        XCTAssertNil(checks.spread(right, at: t), "three sectors of course")
        XCTAssertEqual(checks.sectorsCovered(at: t), 3)
        t = Self.drive(&checks, courses: [280], from: t)
        XCTAssertNotNil(checks.spread(right, at: t))
        // Epochs older than maximumAge no longer count.
        XCTAssertNil(checks.spread(right, at: t + checks.maximumAge + 1))
    }

    /// An epoch whose field a disturbed sample reached, one that gathered longer than `longestEpoch` (a fix
    /// missed), and one that was not straight are no checks.
    func testOnlyCleanStraightEpochsAreKept() {
        var checks = CourseChecks()
        checks.epoch(course: nil, up: Self.up, forward: Self.forward, time: 0)
        var t = 0.0
        for course in [10.0, 100, 190, 280] {
            for k in 1...10 { checks.sample(Self.raw(heading: course), time: t + Double(k) / 10) }
            if course == 10 { checks.disturb() }
            t += course == 100 ? 3 : 1
            checks.epoch(course: course == 190 ? nil : course, up: Self.up, forward: Self.forward, time: t)
        }
        XCTAssertEqual(checks.sectorsCovered(at: t), 1, "only the epoch at 280°")
    }

    /// Until an epoch is offered (no GNSS, or not on land) the samples are not even summed; a step clears it all.
    func testNothingBeforeTheFirstEpochAndNothingAfterAStep() {
        var checks = CourseChecks()
        XCTAssertFalse(checks.active)
        checks.sample(Self.raw(heading: 0), time: 0)
        XCTAssertFalse(checks.active)
        let t = Self.drive(&checks, courses: [10, 100, 190, 280])
        XCTAssertEqual(checks.sectorsCovered(at: t), 4)
        checks.clear()
        XCTAssertEqual(checks.sectorsCovered(at: t), 0)
    }
}
