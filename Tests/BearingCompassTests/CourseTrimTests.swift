@testable import BearingCompass
import XCTest

/// The course going straight at speed as a heading reference: the course carried by the gyroscope (the median of
/// course − gyroscope heading over a minute, its scale learnt from the turns), learnt once a first straight has
/// settled, carried by the gyroscope between straights and faded with time, blind to GNSS jumps and a reversing car.
final class CourseTrimTests: XCTestCase {
    func testAStraightsErrorIsLearntAndCarriedByTheGyroscope() {
        var t = CourseTrim()
        // A compass 4° short of the course on a straight heading 90°, course noise ±0.3°, 40 epochs; the first two
        // (the straight not yet 2 s old, nothing in the window to carry a course) are not taken.
        for k in 0..<40 {
            XCTAssertEqual(t.straightEpoch(course: 94 + 0.3 * sin(Double(k)), heading: 90, gyroHeading: 12, time: Double(k)), k >= 2)
        }
        XCTAssertEqual(t.trim(at: 90, gyroHeading: 12, time: 39), 4, accuracy: 0.2)
        XCTAssertEqual(t.trim(at: 105, gyroHeading: 27, time: 39), 4, accuracy: 0.2, "turned 15° by the gyroscope")
        XCTAssertEqual(t.trim(at: 105, gyroHeading: 12, time: 39), -11, accuracy: 0.2, "the compass turned, the gyroscope did not")
        XCTAssertEqual(t.fadeTime, t.holdTime, accuracy: 0.1 * t.holdTime, "a gyroscope that does not drift: the longest hold")
        XCTAssertEqual(t.trim(at: 90, gyroHeading: 12, time: 39 + t.fadeTime), 2, accuracy: 0.1, "fades with time: half at fadeTime")
    }

    /// The first straight has nothing to carry a course: its own, once 2 s old (the first epochs out of a turn
    /// still carry some of the turn, a receiver's lag and the positions either side).
    func testTheFirstStraightWaitsToSettle() {
        var t = CourseTrim()
        XCTAssertFalse(t.straightEpoch(course: 103, heading: 90, gyroHeading: 90, time: 0))
        XCTAssertFalse(t.straightEpoch(course: 97, heading: 90, gyroHeading: 90, time: 1))
        XCTAssertEqual(t.trim(at: 90, gyroHeading: 90, time: 1), 0, "nothing learnt yet")
        XCTAssertTrue(t.straightEpoch(course: 94, heading: 90, gyroHeading: 90, time: 2))
        XCTAssertEqual(t.trim(at: 90, gyroHeading: 90, time: 2), 4, accuracy: 1e-9)
        // From the fourth, the window's median offset: 103, 97, 94, 94 → 95.5 about the gyroscope's 90°.
        XCTAssertTrue(t.straightEpoch(course: 94, heading: 90, gyroHeading: 90, time: 3))
        XCTAssertEqual(t.trim(at: 90, gyroHeading: 90, time: 3), 5.5, accuracy: 0.05)
        for k in 4..<12 { t.straightEpoch(course: 94, heading: 90, gyroHeading: 90, time: Double(k)) }
        XCTAssertEqual(t.trim(at: 90, gyroHeading: 90, time: 11), 4, accuracy: 0.05, "outvoted")
    }

    /// Multipath moves the course by 12° for two epochs, a car reversing by 180°, the gyroscope still: the course
    /// carried by the gyroscope does not move, and neither does the trim. The street's field turning the compass
    /// by 10° with the course and the gyroscope still is the compass's own error: the trim follows it at once.
    func testGNSSJumpsDoNotMoveTheCarriedCourseTheStreetsFieldDoes() {
        var t = CourseTrim()
        for k in 0..<6 { t.straightEpoch(course: 94, heading: 90, gyroHeading: 30, time: Double(k)) }
        XCTAssertEqual(t.trim(at: 90, gyroHeading: 30, time: 5), 4, accuracy: 0.05)
        for (k, course) in [(6, 106.0), (7, 82.0), (8, 274.0)] {
            XCTAssertTrue(t.straightEpoch(course: course, heading: 90, gyroHeading: 30, time: Double(k)))
            XCTAssertEqual(t.trim(at: 90, gyroHeading: 30, time: Double(k)), 4, accuracy: 0.05, "a course of \(course)°")
        }
        // The street's field: the compass reads 80°, course and gyroscope unchanged.
        XCTAssertTrue(t.straightEpoch(course: 94, heading: 80, gyroHeading: 30, time: 9))
        XCTAssertEqual(t.trim(at: 80, gyroHeading: 30, time: 9), 14, accuracy: 0.05)
        // A bend of 5° that the gyroscope saw too: the offset unchanged, the course carried with it.
        XCTAssertTrue(t.straightEpoch(course: 99, heading: 85, gyroHeading: 35, time: 10))
        XCTAssertEqual(t.trim(at: 85, gyroHeading: 35, time: 10), 14, accuracy: 0.05)
    }

    /// Out of a turn, the window carries the course through it: the first epoch out of it is taken, and its own
    /// course, still 9° into the turn, is outvoted.
    func testTheWindowCarriesTheCourseThroughATurn() {
        var t = CourseTrim()
        for k in 0..<20 { t.straightEpoch(course: 94, heading: 90, gyroHeading: 0, time: Double(k)) }
        // A right-angle turn to the right over 9 s, then straight on 184° (the compass 180°).
        for k in 20..<29 { t.interrupt(gyroHeading: Double(k - 19) * 10, time: Double(k)) }
        XCTAssertTrue(t.straightEpoch(course: 175, heading: 180, gyroHeading: 90, time: 29))
        XCTAssertEqual(t.trim(at: 180, gyroHeading: 90, time: 29), 4, accuracy: 0.05)
    }

    /// Between straights the gyroscope carries the course, not the compass. Through a right-angle turn the compass
    /// comes out 14° short (another heading, another error), and at a stop it wanders by 6° while the gyroscope
    /// holds still: the heading given (the compass plus the trim) is the course carried by the gyroscope, faded
    /// towards the compass only as the gyroscope's own drift could grow (`holdTime`), before any straight epoch at
    /// the new heading. Before, the trim held only near the heading it was learnt at: 14° wrong out of the turn
    /// until the first straight epoch, and the stop's wander passed through.
    func testBetweenStraightsTheGyroscopeCarriesTheCourse() {
        var t = CourseTrim()
        for k in 0..<20 { t.straightEpoch(course: 94, heading: 90, gyroHeading: 0, time: Double(k)) }
        XCTAssertEqual(90 + t.trim(at: 90, gyroHeading: 0, time: 19.5), 94, accuracy: 0.05)
        XCTAssertEqual(t.fadeTime, t.holdTime / 2, "no drift found yet")
        func fade(_ seconds: Double) -> Double { 1 / (1 + (seconds / t.fadeTime) * (seconds / t.fadeTime)) }
        // A right-angle turn to the right over 9 s (the fixes' epochs not straight); half way, between two epochs.
        for k in 20..<24 { t.interrupt(gyroHeading: Double(k - 19) * 10, time: Double(k)) }
        XCTAssertEqual(125 + t.trim(at: 125, gyroHeading: 45, time: 23.5), 125 + 14 * fade(4.5), accuracy: 0.05)
        for k in 24..<29 { t.interrupt(gyroHeading: Double(k - 19) * 10, time: Double(k)) }
        XCTAssertEqual(170 + t.trim(at: 170, gyroHeading: 90, time: 29), 170 + 14 * fade(10), accuracy: 0.05)
        XCTAssertEqual(170 + 14 * fade(10), 184, accuracy: 0.15)
        // A stop of 20 s: the compass wanders to 176°, the gyroscope holds still.
        for k in 29..<49 { t.interrupt(gyroHeading: 90, time: Double(k)) }
        XCTAssertEqual(176 + t.trim(at: 176, gyroHeading: 90, time: 49), 176 + 8 * fade(30), accuracy: 0.05)
        XCTAssertEqual(t.trim(at: 176, gyroHeading: 90, time: 19 + 30 * t.fadeTime), 0, accuracy: 0.1, "long gone: the compass's")
    }

    /// Stopped at a light, positions that wander by metres give "straight" epochs (over 4 m/s from the positions
    /// either side) whose courses are anything: here 90° either side of the road's, the youngest in the window. The
    /// fit of the window's offsets against their age must not take them for a drift (before: four such epochs moved
    /// the course carried by 27°, and the gate then refused every right epoch after them, the trim stuck 27° off).
    func testCoursesFromAStopDoNotMoveTheCarriedCourse() {
        var t = CourseTrim()
        // 60 s straight on 58° (the compass 4° short, the gyroscope at 123°), a 20 s stop, the gyroscope still.
        for k in 0..<60 { t.straightEpoch(course: 58 + 0.5 * sin(Double(k)), heading: 54, gyroHeading: 123, time: Double(k)) }
        var last = 59
        for (k, course) in [(75, 147.0), (76, 146.0), (78, 324.0), (79, 325.0)] {
            for j in (last + 1)..<k { t.interrupt(gyroHeading: 123, time: Double(j)) }
            last = k
            t.straightEpoch(course: course, heading: 54, gyroHeading: 123, time: Double(k))
            XCTAssertEqual(54 + t.trim(at: 54, gyroHeading: 123, time: Double(k)), 58, accuracy: 0.5, "after a course of \(course)° at \(k) s")
        }
        // Off again, straight on: the right courses are taken.
        for k in 80..<90 {
            t.straightEpoch(course: 58, heading: 50, gyroHeading: 123, time: Double(k))
            XCTAssertEqual(50 + t.trim(at: 50, gyroHeading: 123, time: Double(k)), 58, accuracy: 0.5, "\(k) s")
        }
    }

    /// What was carried can be wrong (here the gyroscope's heading jumped by 40° in a 15 s gap without epochs), and
    /// the gate would then refuse every right epoch after it until the trim faded (over two minutes at 40°). The third
    /// of three epochs in a row that the window carries alike, the first two refused, is taken: what was carried is
    /// what was wrong. An epoch's own course (too few in the window) never forces its way.
    func testTheGateYieldsToEpochsThatAgreeWithEachOther() {
        var t = CourseTrim()
        for k in 0..<30 { t.straightEpoch(course: 94, heading: 90, gyroHeading: 0, time: Double(k)) }
        var taken: [Bool] = []
        for k in 45..<52 { taken.append(t.straightEpoch(course: 94, heading: 90, gyroHeading: 40, time: Double(k))) }
        XCTAssertEqual(taken, [false, false, false, false, false, true, true],
                       "two to settle, the third's own course refused, then the window's: two refused, the third taken")
        XCTAssertEqual(90 + t.trim(at: 90, gyroHeading: 40, time: 51), 94, accuracy: 0.05)
    }

    /// Three seconds of the gyroscope's samples lost in a turn: the car turned 40° across the gap, the gyroscope's
    /// heading (bridged by the rates either side) 10°. The window's offsets from before the gap are 30° off after it,
    /// and were carried for a minute; now the window starts again, and the first straight epochs after the gap are
    /// taken once three agree, not one alone: two courses of a multipath jump (36° off, and alike) are not.
    func testAfterAGapInTheGyroscopesSamplesTheCourseIsTakenOnceThreeEpochsAgree() {
        var t = CourseTrim()
        for k in 0..<60 { t.straightEpoch(course: 94, heading: 90, gyroHeading: 30, time: Double(k)) }
        XCTAssertEqual(90 + t.trim(at: 90, gyroHeading: 30, time: 59), 94, accuracy: 0.05)
        t.gyroscopeGap(seconds: 3)
        // After it: the course 134°, the compass 130°, the gyroscope's heading 40° (it should read 70°).
        var taken: [Bool] = []
        for (k, course) in [(63, 134.0), (64, 170.0), (65, 171.0), (66, 134.2), (67, 133.8)] {
            taken.append(t.straightEpoch(course: course, heading: 130, gyroHeading: 40, time: Double(k)))
        }
        XCTAssertEqual(taken, [false, false, false, false, true], "the multipath pair and the first good course alone are not enough")
        XCTAssertEqual(130 + t.trim(at: 130, gyroHeading: 40, time: 67), 134, accuracy: 0.25)
        // From then on the window's, turning with the gyroscope.
        XCTAssertTrue(t.straightEpoch(course: 134, heading: 130, gyroHeading: 40, time: 68))
        XCTAssertEqual(135 + t.trim(at: 135, gyroHeading: 45, time: 68), 139, accuracy: 0.25)
    }

    /// A gap of a second or less is bridged well enough by the rates either side: the window is kept.
    func testAShortGapKeepsTheWindow() {
        var t = CourseTrim()
        for k in 0..<60 { t.straightEpoch(course: 94, heading: 90, gyroHeading: 30, time: Double(k)) }
        t.gyroscopeGap(seconds: 1)
        XCTAssertTrue(t.straightEpoch(course: 104, heading: 90, gyroHeading: 30, time: 61), "the window's course, not this one")
        XCTAssertEqual(90 + t.trim(at: 90, gyroHeading: 30, time: 61), 94, accuracy: 0.05)
    }

    /// A track logged every 5 s: each course from positions spans the epochs either side, so an epoch is straight only
    /// where the gyroscope turned under `chordTurn` either side of it. 10° of turn between two epochs 5 s apart: the
    /// later epoch is not taken, and the earlier one leaves the window (its course, bent by the turn, would move the
    /// offset); a second apart the same epoch is the window's.
    func testASparseTracksEpochBesideATurnIsNoStraightEpoch() {
        var sparse = CourseTrim(), dense = CourseTrim()
        for k in 0..<12 {
            sparse.straightEpoch(course: 94, heading: 90, gyroHeading: 0, time: Double(5 * k))
            dense.straightEpoch(course: 94, heading: 90, gyroHeading: 0, time: Double(k))
        }
        // The last straight epoch's chord already bent: its course reads 3° of the turn to come.
        XCTAssertTrue(sparse.straightEpoch(course: 97, heading: 90, gyroHeading: 0, time: 60))
        XCTAssertFalse(sparse.straightEpoch(course: 104, heading: 100, gyroHeading: 10, time: 65), "10° turned in 5 s")
        XCTAssertTrue(dense.straightEpoch(course: 104, heading: 100, gyroHeading: 10, time: 12))
        // Straight again after the turn: the window's offset is the straight's own (94°), not moved by the bent one.
        for k in 14..<17 { sparse.straightEpoch(course: 104, heading: 100, gyroHeading: 10, time: Double(5 * k)) }
        XCTAssertEqual(100 + sparse.trim(at: 100, gyroHeading: 10, time: 80), 104, accuracy: 0.05)
    }

    /// The attitude filter restarted (a new mounting level, the gyroscope lost or back): its heading starts from
    /// another origin, and nothing carried in the old one holds.
    func testAFrameRestartForgetsWhatWasCarried() {
        var t = CourseTrim()
        for k in 0..<30 { t.straightEpoch(course: 94, heading: 90, gyroHeading: 0, time: Double(k)) }
        t.frameRestarted()
        XCTAssertEqual(t.trim(at: 90, gyroHeading: 123, time: 30), 0, "nothing carried")
        XCTAssertFalse(t.straightEpoch(course: 94, heading: 91, gyroHeading: 123, time: 30), "a first straight again: it settles")
        XCTAssertFalse(t.straightEpoch(course: 94, heading: 91, gyroHeading: 123, time: 31))
        XCTAssertTrue(t.straightEpoch(course: 94, heading: 91, gyroHeading: 123, time: 32))
        XCTAssertEqual(91 + t.trim(at: 91, gyroHeading: 123, time: 32), 94, accuracy: 0.05)
    }

    /// The gyroscope's heading given along another axis (a board standing in the car, its forward axis taken): the
    /// same orientation reads 150° more. The course carried is the same, and the next straight epochs are taken, not
    /// refused as a car reversing.
    func testAGyroscopeHeadingAlongAnotherAxisCarriesTheSameCourse() {
        var t = CourseTrim()
        for k in 0..<40 { t.straightEpoch(course: 94 + 0.3 * sin(Double(k)), heading: 90, gyroHeading: 12, time: Double(k)) }
        XCTAssertEqual(t.trim(at: 90, gyroHeading: 12, time: 39), 4, accuracy: 0.2)
        t.gyroscopeHeadingMoved(by: 150)
        XCTAssertEqual(t.trim(at: 90, gyroHeading: 162, time: 39), 4, accuracy: 0.2, "the same course carried")
        XCTAssertEqual(t.trim(at: 105, gyroHeading: 177, time: 39), 4, accuracy: 0.2, "turned 15° by the gyroscope")
        for k in 40..<50 {
            XCTAssertTrue(t.straightEpoch(course: 94, heading: 90, gyroHeading: 162, time: Double(k)), "epoch \(k) taken")
        }
        XCTAssertEqual(t.trim(at: 90, gyroHeading: 162, time: 49), 4, accuracy: 0.2)
    }

    /// A gyroscope that reads 3 % too much (an MPU-9250's scale factor tolerance): each right-angle turn moves
    /// course − gyroscope heading by 2.7°. The slopes against the turns give the scale, and the course carried out
    /// of a turn is right.
    func testTheGyroscopesScaleIsLearntFromTheTurns() {
        var t = CourseTrim()
        var time = 0.0, heading = 0.0
        func gyro(_ h: Double) -> Double { 1.03 * h }
        for leg in 0..<12 {
            // 25 s straight, the compass 4° short of the course; then a right-angle turn over 9 s.
            for k in 0..<25 {
                let taken = t.straightEpoch(course: heading, heading: heading - 4, gyroHeading: gyro(heading), time: time)
                if leg >= 6 {
                    XCTAssertTrue(taken)
                    XCTAssertEqual(t.trim(at: heading - 4, gyroHeading: gyro(heading), time: time), 4, accuracy: 0.3, "leg \(leg), epoch \(k)")
                }
                time += 1
            }
            for _ in 0..<9 {
                heading += 10
                t.interrupt(gyroHeading: gyro(heading), time: time)
                time += 1
            }
        }
        XCTAssertEqual(try XCTUnwrap(t.gyroScaleError), 0.03, accuracy: 0.002)
    }

    /// One curve cannot tell the gyroscope's scale from the course's own slow error. A receiver's course errs alike for
    /// a minute or more (the same satellites, the same multipath along a street), and differently on the next street:
    /// here a perfect gyroscope, the course 1° right of the heading for a minute, a 32° bend, then 1° left of it for a
    /// minute. Fitted against the turn, that is a scale 6 % off, which a right-angle corner then carries 5° wrong until
    /// the next straight (simulated seed 46 learnt 6–7 % from one such bend, for a gyroscope 1.25 % off). Gyroscopes'
    /// scale errors are a few percent at most, so one bend's fit is not enough to be believed in full
    /// (`CourseTrim.scaleEvidence`). Before: 4.61° off; now 1.24°, of which 0.76° the sixth of the scale believed and the
    /// rest the window's fit against time, which reads what the fit against the turn leaves of the step as a drift.
    func testOneBendDoesNotTeachTheGyroscopesScaleAlone() {
        var t = CourseTrim()
        var time = 0.0, heading = 10.0
        for _ in 0..<60 {
            t.straightEpoch(course: heading + 1, heading: heading - 4, gyroHeading: heading, time: time)
            time += 1
        }
        for _ in 0..<16 {
            heading += 2
            t.interrupt(gyroHeading: heading, time: time)
            time += 1
        }
        for _ in 0..<60 {
            t.straightEpoch(course: heading - 1, heading: heading - 4, gyroHeading: heading, time: time)
            time += 1
        }
        // A right-angle corner with no straight epoch in it, the compass the same 4° short after it.
        for _ in 0..<9 {
            heading += 10
            t.interrupt(gyroHeading: heading, time: time)
            time += 1
        }
        // The course carried out of the corner: the last straight's (1° left of the heading) turned by the gyroscope.
        let carried = heading - 4 + t.trim(at: heading - 4, gyroHeading: heading, time: time)
        print("one bend against the course's slow error: the scale fitted \(t.gyroScaleError.map { String(format: "%.4f", $0) } ?? "none"), "
              + "the course carried out of a right-angle corner \(String(format: "%.2f", carried - (heading - 1)))° off the last straight's")
        XCTAssertEqual(carried, heading - 1, accuracy: 1.6, "the course carried out of the corner, a perfect gyroscope")
    }

    /// A bend taken at speed below the straight's 2 °/s (a road's long curve) gives straight epochs whose courses lag the
    /// gyroscope: a receiver's course describes the second or so before its fix, so each is `lag · ω` behind the heading,
    /// whichever way the road bends, while the turn since the straight before grows. Fitted against the turn, that is a
    /// scale of about −lag / (the seconds into the bend), and the bend's offsets move the window's median or fit for the
    /// offset. Here: 25 s straight, then 36° of bend at 1.8 °/s to the right, with the course a second late throughout.
    /// Before the window's fits took steady epochs only (`CourseTrim.steadyRate`): the scale taught 1.1 %, the trim 1.42° off.
    func testABendsLaggingCoursesDoNotTeachTheGyroscopesScale() {
        var t = CourseTrim()
        var time = 0.0, heading = 30.0
        var worst = 0.0
        func course(_ rate: Double) -> Double { heading - rate * 1.0 }
        for leg in 0..<12 {
            for _ in 0..<25 {
                _ = t.straightEpoch(course: course(0), heading: heading - 4, gyroHeading: heading, time: time)
                if leg >= 2 { worst = max(worst, abs(t.trim(at: heading - 4, gyroHeading: heading, time: time) - 4)) }
                time += 1
            }
            let rate = 1.8
            for _ in 0..<20 {
                heading += rate
                _ = t.straightEpoch(course: course(rate), heading: heading - 4, gyroHeading: heading, time: time)
                time += 1
            }
        }
        print("a bend's lagging courses: the gyroscope's scale learnt \(t.gyroScaleError.map { String(format: "%.4f", $0) } ?? "none"), "
              + "the trim on the straights at most \(String(format: "%.2f", worst))° off")
        XCTAssertLessThan(abs(t.gyroScaleError ?? 0), 0.005, "a perfect gyroscope's scale error learnt")
        XCTAssertLessThan(worst, 0.5, "the trim on the straights, ° off")
    }

    /// A multipath jump at the young end of the window: a car whose gyroscope's bias a stop measured drives on along a
    /// straight, and for 8 s its courses are 5.6° off (a velocity error of 1.5 m/s across the track at
    /// 15 m/s, as in town). The window's fit against time has those 8 epochs, the youngest, at the end of its lever:
    /// fitted freely, they tilt it into a drift and the offset now with it (simulated seed 10: the course carried 2.6°
    /// off for 20 s after a roundabout). A bias measured at a rest leaves a drift of thousandths of a °/s, so the fit
    /// weighs a drift against that (`CourseTrim.restDrift`, growing with the time since the rest). Without a rest the
    /// fit is free: the same jump then moves the trim as before. Before: 0.98° off either way; now 0.33° after a rest.
    func testAJumpAtTheWindowsYoungEndIsNoDriftWhenTheBiasIsMeasured() {
        func worst(sinceRest: Double?) -> Double {
            var t = CourseTrim()
            var worst = 0.0
            for k in 0..<100 {
                let time = Double(k), error = k >= 64 && k < 72 ? 5.6 : 0
                t.straightEpoch(course: 70 + error + 0.3 * sin(time), heading: 66, gyroHeading: 10, time: time,
                                sinceRest: sinceRest.map { $0 + time })
                if k >= 60 { worst = max(worst, abs(t.trim(at: 66, gyroHeading: 10, time: time) - 4)) }
            }
            return worst
        }
        let measured = worst(sinceRest: 0), free = worst(sinceRest: nil)
        print("a jump at the window's young end: the trim at most \(String(format: "%.2f", measured))° off with the bias measured, "
              + "\(String(format: "%.2f", free))° without")
        XCTAssertLessThan(measured, 0.45, "the trim, ° off, the bias measured at a rest")
        XCTAssertGreaterThan(free, 0.7, "without a rest the fit takes a drift from the jump")
    }

    /// A gyroscope whose bias was never learnt (no rest: a noisy accelerometer) drifts by 0.25 °/s, and the offset
    /// with it, 15° a minute: the window's fit takes the drift, and the course carried is right.
    func testAGyroscopeThatDriftsIsFollowed() {
        var t = CourseTrim()
        var time = 0.0, heading = 20.0
        for leg in 0..<10 {
            for _ in 0..<40 {
                let taken = t.straightEpoch(course: heading, heading: heading - 4, gyroHeading: heading + 0.25 * time, time: time)
                if leg >= 2 {
                    XCTAssertTrue(taken)
                    XCTAssertEqual(t.trim(at: heading - 4, gyroHeading: heading + 0.25 * time, time: time), 4, accuracy: 0.3, "leg \(leg), \(time) s")
                }
                time += 1
            }
            for _ in 0..<9 {
                heading += leg % 2 == 0 ? 10 : -10
                t.interrupt(gyroHeading: heading + 0.25 * time, time: time)
                time += 1
            }
        }
    }

    /// A gyroscope drifting 0.1 °/s (its bias not yet learnt) whose bias is then learnt at a stop: from then on it does
    /// not drift. The window's fit had taken the drift; told of the change (`gyroscopeDriftChanged`), the offsets it
    /// keeps are put as they would have been under the new bias, and the course carried stays right after the stop
    /// (left as they were, the fit went on taking 0.1 °/s out of a gyroscope that no longer drifted: 1.49° off here a
    /// minute on, until the window held the new drift alone; on a simulated drive 6°).
    func testABiasLearntAtAStopChangesTheDriftTheWindowFits() {
        var t = CourseTrim()
        var time = 0.0, gyro = 0.0, worst = 0.0
        let heading = 50.0
        for k in 0..<180 {
            let learnt = k >= 60
            if k == 60 { t.gyroscopeDriftChanged(by: -0.1, at: time) }
            let taken = t.straightEpoch(course: heading, heading: heading - 3, gyroHeading: heading + gyro, time: time)
            if k >= 10 { XCTAssertTrue(taken, "\(time) s") }
            // Once the window holds the drift (20 epochs over 30 s).
            if k >= 40 {
                worst = max(worst, abs(t.trim(at: heading - 3, gyroHeading: heading + gyro, time: time) - 3))
            }
            time += 1
            gyro += learnt ? 0 : 0.1
        }
        XCTAssertLessThan(worst, 0.3, "the course carried, before and after the bias was learnt")
    }

    func testAcrossNorthTheErrorIsTheShortWay() {
        var t = CourseTrim()
        for k in 0..<3 { t.straightEpoch(course: 1, heading: 358, gyroHeading: 359, time: Double(k)) }
        XCTAssertEqual(t.trim(at: 358, gyroHeading: 359, time: 2), 3, accuracy: 1e-9)
        // The offsets across ±180°: 179° and −179° are 2° apart, not 358°.
        var u = CourseTrim()
        for k in 0..<4 { u.straightEpoch(course: 179, heading: 178, gyroHeading: 0, time: Double(k)) }
        XCTAssertTrue(u.straightEpoch(course: 181, heading: 180, gyroHeading: 0, time: 4))
        XCTAssertEqual(u.trim(at: 180, gyroHeading: 0, time: 4), -1, accuracy: 0.05, "the carried course is 179°")
    }

    /// The median by selection is the median of the values sorted, to the bit: odd and even counts, ties, signs.
    func testTheMedianBySelectionIsTheSortedValuesMedian() {
        var state: UInt64 = 12345
        func next() -> Double {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Double(state >> 11) / Double(1 << 53)
        }
        for n in 1...130 {
            for ties in [false, true] {
                let values = (0..<n).map { _ in ties ? (next() * 6).rounded() - 3 : (next() - 0.5) * 200 }
                let expected = RunningMedian.middle(ofSorted: values.sorted())
                XCTAssertEqual(RunningMedian.median(of: values).bitPattern, expected.bitPattern, "\(n) values, ties \(ties): \(values)")
            }
        }
        XCTAssertEqual(RunningMedian.median(of: [3, 1, 2, 2]), 2)
        XCTAssertEqual(RunningMedian.median(of: [5]), 5)
    }

    func testTheRunningMedianIsTheLatestValuesMedian() {
        var m = RunningMedian(capacity: 5)
        XCTAssertNil(m.median)
        for v in [5.0, 1, 4] { m.add(v) }
        XCTAssertEqual(m.median, 4)
        for v in [2.0, 3, 10, 11] { m.add(v) }
        // The latest five: 4, 2, 3, 10, 11.
        XCTAssertEqual(m.median, 4)
        XCTAssertEqual(m.count, 5)
        m.add(.nan)
        XCTAssertEqual(m.count, 5, "not a value")
    }
}
