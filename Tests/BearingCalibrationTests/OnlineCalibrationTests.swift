@testable import BearingCalibration
@testable import BearingOnlineCalibration
import BearingModel
import BearingSimulator
import Foundation
import XCTest

/// Online calibration on simulated motion: a known hard and soft iron, the field of a known dip, the
/// filter's "up" given exactly.
final class OnlineCalibrationTests: XCTestCase {
    static let field = 50.0, dip = 65.0
    /// The Earth field in ENU (north and down components).
    static let earth = Vector3(0, field * cos(dip * .pi / 180), -field * sin(dip * .pi / 180))
    /// 5 % soft iron (with a cross term) and a 20 µT hard iron.
    static let softIron = Matrix3([1.05, 0.02, 0], [0.02, 0.97, 0.01], [0, 0.01, 1.0])
    static let hardIron = Vector3(20, -12, 6)

    /// Sensor → ENU at `t`: turning at `rate` °/s, rolling ±`roll`° and pitching ±`pitch`°.
    static func orientation(_ t: Double, rate: Double, roll: Double, pitch: Double) -> Quaternion {
        let yaw = Quaternion.aboutZ(-rate * t * .pi / 180)
        let r = Quaternion(rotationVector: Vector3(0, roll * sin(2 * .pi * t / 7) * .pi / 180, 0))
        let p = Quaternion(rotationVector: Vector3(pitch * sin(2 * .pi * t / 11) * .pi / 180, 0, 0))
        return yaw * p * r
    }

    /// Runs `seconds` of samples at 10 Hz; `hardIron(t)` and `extra(t)` (a passing disturbance, ENU) may vary.
    /// Returns the tracker and the RMS heading error of the calibrated field over the last `scoreLast` seconds.
    static func run(_ tracker: inout OnlineMagnetometerCalibration, from: Double = 0, seconds: Double, rate: Double = 6, roll: Double = 40, pitch: Double = 30,
                    hardIron: (Double) -> Vector3 = { _ in OnlineCalibrationTests.hardIron },
                    extra: (Double) -> Vector3 = { _ in .zero }, scoreLast: Double = 30, seed: UInt64 = 3, learn: Bool = true,
                    gyroscope: Bool = false) -> (rms: Double, changes: [CalibrationChange]) {
        var random = SplitMix64(seed: seed)
        var sum = 0.0, n = 0
        var changes: [CalibrationChange] = []
        var t = from
        while t < from + seconds {
            let q = orientation(t, rate: rate, roll: roll, pitch: pitch)
            let inSensor = q.conjugate.rotate(earth + extra(t))
            let noise = Vector3(random.uniform(-0.3, 0.3), random.uniform(-0.3, 0.3), random.uniform(-0.3, 0.3))
            let raw = softIron * inSensor + hardIron(t) + noise
            let up = q.conjugate.rotate(Vector3(0, 0, 1))
            // The gyroscope's 6D frame: ENU turned by an arbitrary heading (where its integration started).
            let east = gyroscope ? (Quaternion.aboutZ(1.234) * q).conjugate.rotate(Vector3(1, 0, 0)) : nil
            if learn, let c = tracker.add(raw, up: up, east: east, time: t) { changes.append(c) }
            if learn, tracker.fitDue(at: t), case .accepted(let c) = tracker.fit(at: t) { changes.append(c) }
            if t >= from + seconds - scoreLast {
                // Heading error: the calibrated field brought to ENU against north.
                let f = q.rotate(tracker.inForce.apply(raw))
                let e = atan2(f.x, f.y) * 180 / .pi
                sum += e * e
                n += 1
            }
            t += 0.1
        }
        return ((sum / Double(max(n, 1))).squareRoot(), changes)
    }

    func testLearnsHardAndSoftIronFromAColdStart() {
        var tracker = OnlineMagnetometerCalibration(calibration: nil, origin: .none)
        let before = Self.run(&tracker, seconds: 5).rms
        let after = Self.run(&tracker, from: 5, seconds: 175)
        print("online calibration, cold start, tumbling: heading RMS \(before)° at first, \(after.rms)° after 3 min; \(after.changes.count) changes")
        XCTAssertEqual(tracker.origin, .auto)
        XCTAssertLessThan(after.rms, 0.8, "measured 0.52° (0.71° while the first fit, on part of the sphere, stayed in force)")
        XCTAssertGreaterThan(before, 10)
        // The fitted hard iron, in raw units, is the simulated one.
        XCTAssertLessThan((tracker.inForce.offset - Self.hardIron).length, 1.5, "\(tracker.inForce.offset)")
    }

    /// A hard iron twice the horizontal field (45 µT against 21): the raw field points within ±28° of it
    /// whatever the heading. Binned by the field's direction about the hard iron in force (none yet), a
    /// whole turn falls in a few ring cells and nothing is ever fitted; binned by the gyroscope's heading,
    /// the turn is learnt.
    func testAHardIronLargerThanTheHorizontalFieldIsLearntByTheGyroscopesHeading() {
        let large = Vector3(-38, 24, -12)
        var withGyroscope = OnlineMagnetometerCalibration(calibration: nil, origin: .none)
        withGyroscope.expect(field: Self.field, dip: Self.dip)
        let r = Self.run(&withGyroscope, seconds: 600, rate: 3, roll: 10, pitch: 4, hardIron: { _ in large }, scoreLast: 120, gyroscope: true)
        var without = OnlineMagnetometerCalibration(calibration: nil, origin: .none)
        without.expect(field: Self.field, dip: Self.dip)
        let w = Self.run(&without, seconds: 600, rate: 3, roll: 10, pitch: 4, hardIron: { _ in large }, scoreLast: 120)
        print("online calibration, a 45 µT hard iron on a turning boat: heading RMS \(r.rms)° binned by the gyroscope's heading "
              + "(hard iron \(withGyroscope.inForce.offset)), \(w.rms)° by the field's direction (\(w.changes.count) changes)")
        XCTAssertEqual(withGyroscope.origin, .auto)
        XCTAssertLessThan(r.rms, 1.0)
        XCTAssertLessThan((withGyroscope.inForce.offset - large).length, 1.5, "hard iron \(withGyroscope.inForce.offset)")
        XCTAssertEqual(without.origin, .none, "the field's direction alone cannot bin this turn: if it now can, say so in the docs")
    }

    /// A turn gives the hard iron and the horizontal soft iron: the heading must be no worse than the true hard
    /// iron alone gives. WMM's field and dip at the fix (as the daemon has them) place the vertical hard iron;
    /// without them a turn leaves it where it was, and the horizontal part is learnt all the same.
    func testABoatThatOnlyRollsLearnsTheHardIron() {
        var tracker = OnlineMagnetometerCalibration(calibration: nil, origin: .none)
        tracker.expect(field: Self.field, dip: Self.dip)
        let r = Self.run(&tracker, seconds: 600, rate: 3, roll: 10, pitch: 4, scoreLast: 120)
        var exact = OnlineMagnetometerCalibration(calibration: MagneticCalibration(offset: Self.hardIron, matrix: .identity), origin: .manual)
        let floor = Self.run(&exact, seconds: 600, rate: 3, roll: 10, pitch: 4, scoreLast: 120, learn: false)
        print("online calibration, a boat turning and rolling ±10°: heading RMS \(r.rms)° over the last 2 min (the true hard iron with the 5 % soft iron left: \(floor.rms)°); "
              + "\(r.changes.count) changes; hard iron \(tracker.inForce.offset)")
        XCTAssertEqual(tracker.origin, .auto)
        XCTAssertLessThan(r.rms, floor.rms + 0.5)
        XCTAssertLessThan((tracker.inForce.offset - Self.hardIron).length, 1.5, "hard iron \(tracker.inForce.offset)")
        // Without WMM: the horizontal hard iron all the same.
        var blind = OnlineMagnetometerCalibration(calibration: nil, origin: .none)
        _ = Self.run(&blind, seconds: 600, rate: 3, roll: 10, pitch: 4, scoreLast: 120)
        let e = blind.inForce.offset - Self.hardIron
        XCTAssertLessThan((e.x * e.x + e.y * e.y).squareRoot(), 1.5, "horizontal hard iron without WMM \(blind.inForce.offset)")
    }

    func testAStepOfTheHardIronIsRelearntAndAPassingDisturbanceIsNot() {
        var tracker = OnlineMagnetometerCalibration(calibration: nil, origin: .none)
        _ = Self.run(&tracker, seconds: 180)
        let settled = tracker.inForce
        // A truck passing for 5 s: 30 µT more for a moment.
        let passing = Self.run(&tracker, from: 180, seconds: 60, extra: { t in t > 200 && t < 205 ? Vector3(30, 0, 0) : .zero })
        XCTAssertEqual(tracker.steps, 0, "a passing disturbance taken as a step")
        XCTAssertLessThan((tracker.inForce.offset - settled.offset).length, 1.0, "a passing disturbance was learnt")
        XCTAssertLessThan(passing.rms, 1.0)
        // A new battery: the hard iron jumps by 10 µT and stays.
        let jumped = Self.hardIron + Vector3(10, 0, 0)
        let step = Self.run(&tracker, from: 240, seconds: 120, hardIron: { _ in jumped }, scoreLast: 30)
        print("online calibration, hard iron +10 µT: \(tracker.steps) step(s); heading RMS \(step.rms)° 90 s later; changes: "
              + step.changes.map { "moved \($0.offsetMoved) µT\($0.afterStep ? " after a step" : "")" }.joined(separator: ", "))
        XCTAssertEqual(tracker.steps, 1)
        XCTAssertLessThan((tracker.inForce.offset - jumped).length, 1.5, "\(tracker.inForce.offset)")
        XCTAssertLessThan(step.rms, 1.0)
        // The battery out again: the calibration before the step comes back at once.
        let back = Self.run(&tracker, from: 360, seconds: 30, scoreLast: 20)
        XCTAssertTrue(back.changes.contains { $0.recalled }, "\(back.changes)")
        XCTAssertLessThan(back.rms, 1.0)
    }

    func testAStuckMagnetometerChangesNothing() {
        let manual = MagneticCalibration(offset: Vector3(1, 2, 3), matrix: .identity)
        var tracker = OnlineMagnetometerCalibration(calibration: manual, origin: .manual)
        for i in 0..<3000 {
            let t = Double(i) * 0.1
            tracker.add(Vector3(12, -3, 40), up: Vector3(0, 0, 1), time: t)
            if tracker.fitDue(at: t), case .accepted = tracker.fit(at: t) { XCTFail("a stuck magnetometer gave a calibration") }
        }
        XCTAssertEqual(tracker.inForce, manual)
        XCTAssertEqual(tracker.origin, .manual)
        // Not a number, and zero (an unread register), are not learnt at all.
        tracker.add(Vector3(.nan, 0, 0), up: nil, time: 400)
        tracker.add(.zero, up: nil, time: 401)
        XCTAssertEqual(tracker.regions, 1)
    }

    func testAManualCalibrationIsKeptWhileItExplainsTheField() {
        let manual = MagneticCalibration(offset: Self.hardIron, matrix: Self.softIron.inverse!)
        var tracker = OnlineMagnetometerCalibration(calibration: manual, origin: .manual, field: Self.field)
        let r = Self.run(&tracker, seconds: 300)
        XCTAssertTrue(r.changes.isEmpty, "\(r.changes.count) changes to a calibration that was right")
        XCTAssertEqual(tracker.origin, .manual)
        XCTAssertLessThan(r.rms, 0.5)
    }

    /// A level car (sensor x forward, y left, z up) going straight at true heading `course`, 5° east of
    /// magnetic north's declination: one raw sample a tenth of a second for `seconds`, and an epoch each second
    /// with the course `reported(t)`. Returns the changes.
    static func driveStraight(_ tracker: inout OnlineMagnetometerCalibration, course: Double, from: Double = 0, seconds: Double,
                              hardIron: Vector3, reported: (Double) -> Double) -> [CalibrationChange] {
        let declination = 5.0, d = declination * .pi / 180, h = field * cos(dip * .pi / 180)
        let earth = Vector3(h * sin(d), h * cos(d), -field * sin(dip * .pi / 180))
        let psi = course * .pi / 180
        let forward = Vector3(sin(psi), cos(psi), 0), left = Vector3(-cos(psi), sin(psi), 0), up = Vector3(0, 0, 1)
        var random = SplitMix64(seed: 5)
        var changes: [CalibrationChange] = []
        var t = from
        while t < from + seconds {
            let noise = Vector3(random.uniform(-0.3, 0.3), random.uniform(-0.3, 0.3), random.uniform(-0.3, 0.3))
            let raw = Vector3(forward.dot(earth), left.dot(earth), up.dot(earth)) + hardIron + noise
            if let c = tracker.add(raw, up: up, east: nil, time: t) { changes.append(c) }
            t += 0.1
            if Int((t * 10).rounded()) % 10 == 0,
               let c = tracker.course(reported(t), declination: declination, up: up, forward: Vector3(1, 0, 0), time: t) {
                changes.append(c)
            }
        }
        return changes
    }

    /// On land from a cold start, ten GNSS epochs going straight give the hard iron at once (the course over
    /// ground is the heading; WMM gives the field), long before a turn has gone round it.
    func testACarGoingStraightTakesItsHardIronFromTheCourse() throws {
        var tracker = OnlineMagnetometerCalibration(calibration: nil, origin: .none, settings: .forLand)
        tracker.expect(field: Self.field, dip: Self.dip)
        var random = SplitMix64(seed: 9)
        let changes = Self.driveStraight(&tracker, course: 30, seconds: 15, hardIron: Self.hardIron) { _ in 30 + random.uniform(-1, 1) }
        let change = try XCTUnwrap(changes.first, "no hard iron from 15 s going straight")
        print("course-aided start: \(change.summary); hard iron \(tracker.inForce.offset) for \(Self.hardIron)")
        XCTAssertEqual(changes.count, 1)
        XCTAssertTrue(change.fromCourse && change.turnsTheHeading)
        XCTAssertEqual(change.regions, 10, "ten epochs")
        XCTAssertLessThan((tracker.inForce.offset - Self.hardIron).length, 0.5)
        XCTAssertEqual(tracker.origin, .auto)
        XCTAssertTrue(tracker.learning, "a start from the course still learns every sample for the turn's fit")
        XCTAssertTrue(change.summary.contains("10 GNSS epochs going straight at speed give it"), change.summary)
        // It starts a calibration, never replaces one: more epochs change nothing.
        XCTAssertTrue(Self.driveStraight(&tracker, course: 30, from: 15, seconds: 15, hardIron: Self.hardIron + Vector3(5, 0, 0)) { _ in 30 }.isEmpty)
    }

    /// A drive that starts in an underground car park: a minute of turning in its steel's field (tens of µT that change
    /// as the car moves) with no fix, then a street. The start from the course takes only the field of its own epochs:
    /// the first straight epoch's samples are those since the epoch before, not the whole car park's (which held
    /// them all, one epoch of ten off by the car park's field). And the points learnt in the car park, before anything
    /// was in force to judge them, are dropped once the start is in force where it finds them disturbed: no fit is made
    /// from them (on the simulated car park's seed 4 all 49 regions held car-park points, and every fit was kept out).
    func testACourseStartAfterAnUndergroundCarPark() throws {
        var tracker = OnlineMagnetometerCalibration(calibration: nil, origin: .none, settings: .forLand)
        tracker.expect(field: Self.field, dip: Self.dip)
        var noise = SplitMix64(seed: 12)
        let up = Vector3(0, 0, 1)
        var t = 0.0
        while t < 60 {
            let steel = Vector3(25 * sin(0.7 * t), 20 * cos(0.45 * t), 15 * sin(0.3 * t + 1))
            tracker.add(Self.level(course: 6 * t, hardIron: Self.hardIron + steel, noise: &noise), up: up, time: t)
            t += 0.1
        }
        let carPark = tracker.heldPoints.count
        let changes = Self.driveStraight(&tracker, course: 30, from: 60, seconds: 15, hardIron: Self.hardIron) { _ in 30 }
        let change = try XCTUnwrap(changes.first, "no hard iron from 15 s going straight after the car park")
        let disturbed = tracker.heldPoints.filter { abs(tracker.inForce.apply($0).length / Self.field - 1) > tracker.settings.normDisturbance }
        print("a course start after a car park: \(change.summary); hard iron \(tracker.inForce.offset) for \(Self.hardIron); "
              + "points \(carPark) from the car park, \(tracker.heldPoints.count) after the start, \(disturbed.count) of them disturbed")
        XCTAssertLessThan(change.after.normPercent, 1, "an epoch's field from the whole car park")
        XCTAssertLessThan((tracker.inForce.offset - Self.hardIron).length, 0.5)
        XCTAssertGreaterThan(carPark, 10)
        XCTAssertEqual(disturbed.count, 0, "the car park's points kept for the fits")
    }

    /// An epoch that is not straight (a bend, a change of lane) ends the field gathered for the next straight one, which
    /// takes its own second's samples: it is not set aside as one spanning more than an epoch. One epoch straight, then
    /// two not, over and over: the start comes on the tenth straight epoch (with every straight epoch's field spanning
    /// three seconds, none would count).
    func testAnEpochNotStraightStartsTheNextStraightOnesField() throws {
        var tracker = OnlineMagnetometerCalibration(calibration: nil, origin: .none, settings: .forLand)
        tracker.expect(field: Self.field, dip: Self.dip)
        var noise = SplitMix64(seed: 13)
        let up = Vector3(0, 0, 1), forward = Vector3(1, 0, 0)
        var straight = 0, startedAfter: Int?
        for k in 1...400 where startedAfter == nil {
            let t = Double(k) / 10
            // The seconds before an epoch that is not straight are in a bend (a course of 90°).
            let bend = ((k + 9) / 10) % 3 != 0
            tracker.add(Self.level(course: bend ? 90 : 30, hardIron: Self.hardIron, noise: &noise), up: up, time: t)
            guard k % 10 == 0 else { continue }
            if (k / 10) % 3 != 0 {
                tracker.courseEpoch(nil, up: up, forward: forward, time: t)
            } else {
                straight += 1
                tracker.courseEpoch(30, up: up, forward: forward, time: t)
                if tracker.course(30, declination: 0, up: up, forward: forward, time: t) != nil { startedAfter = straight }
            }
        }
        print("straight epochs between others: the start from the course after \(startedAfter.map { "\($0)" } ?? "none") straight epochs")
        XCTAssertEqual(startedAfter, 10)
        XCTAssertLessThan((tracker.inForce.offset - Self.hardIron).length, 0.5)
    }

    /// A GNSS that lies (courses all over the place), a start without WMM's field, and a calibration already in
    /// force: no hard iron is taken from the course.
    func testACourseThatDisagreesOrNoFieldOrACalibrationInForceTeachesNothing() {
        var lying = OnlineMagnetometerCalibration(calibration: nil, origin: .none, settings: .forLand)
        lying.expect(field: Self.field, dip: Self.dip)
        var random = SplitMix64(seed: 11)
        XCTAssertTrue(Self.driveStraight(&lying, course: 30, seconds: 60, hardIron: Self.hardIron) { _ in random.uniform(0, 360) }.isEmpty)
        XCTAssertEqual(lying.origin, .none)
        XCTAssertEqual(lying.inForce, .identity)

        var unknownField = OnlineMagnetometerCalibration(calibration: nil, origin: .none, settings: .forLand)
        XCTAssertTrue(Self.driveStraight(&unknownField, course: 30, seconds: 30, hardIron: Self.hardIron) { _ in 30 }.isEmpty)

        let manual = MagneticCalibration(offset: Vector3(1, 2, 3), matrix: .identity)
        var kept = OnlineMagnetometerCalibration(calibration: manual, origin: .manual, settings: .forLand)
        kept.expect(field: Self.field, dip: Self.dip)
        XCTAssertTrue(Self.driveStraight(&kept, course: 30, seconds: 30, hardIron: Self.hardIron) { _ in 30 }.isEmpty)
        XCTAssertEqual(kept.inForce, manual)
    }

    /// A level car's raw field heading `course` degrees magnetic (sensor x forward, y left, z up), behind `hardIron`.
    static func level(course: Double, hardIron: Vector3, noise: inout SplitMix64) -> Vector3 {
        let h = field * cos(dip * .pi / 180), psi = course * .pi / 180
        let earth = Vector3(0, h, -field * sin(dip * .pi / 180))
        let forward = Vector3(sin(psi), cos(psi), 0), left = Vector3(-cos(psi), sin(psi), 0)
        return Vector3(forward.dot(earth), left.dot(earth), earth.z) + hardIron
            + Vector3(noise.uniform(-0.3, 0.3), noise.uniform(-0.3, 0.3), noise.uniform(-0.3, 0.3))
    }

    /// Straights of 10 s on four courses, a sample every 0.1 s and a GNSS epoch each second (`courseEpoch`), behind
    /// `hardIron`; then two level turns at 6 °/s behind `turning`, and a fit. Returns what the fit came to.
    static func straightsThenATurn(_ tracker: inout OnlineMagnetometerCalibration, straights hardIron: Vector3?,
                                   turning: Vector3) -> OnlineMagnetometerCalibration.Outcome {
        var noise = SplitMix64(seed: 21)
        let up = Vector3(0, 0, 1), forward = Vector3(1, 0, 0)
        var t = 0.0
        if let hardIron {
            for course in [20.0, 110, 200, 290] {
                tracker.courseEpoch(nil, up: up, forward: forward, time: t)
                for k in 1...100 {
                    t += 0.1
                    tracker.add(level(course: course, hardIron: hardIron, noise: &noise), up: up, time: t)
                    if k % 10 == 0 { tracker.courseEpoch(course, up: up, forward: forward, time: t) }
                }
            }
        }
        for k in 1...1200 {
            t += 0.1
            tracker.add(level(course: 6 * Double(k) / 10, hardIron: turning, noise: &noise), up: up, time: t)
        }
        return tracker.fit(at: t)
    }

    /// On land with GNSS the course judges a fit on epochs the fit never saw. A calibration in force that the straight
    /// epochs bear out, and a turn behind a hard iron 2.5 µT away (the street's field, a load switched on for the turn):
    /// the fit explains the turn's points better, but its heading departs from the course, and it is refused. When the
    /// epochs bear the fit out instead, it is taken at once, without waiting for the samples after it; with no epochs
    /// it waits for them as before.
    func testTheCourseJudgesAFitOnEpochsItNeverSaw() throws {
        let a = Vector3(20, -12, 6), b = a + Vector3(2.5, 0, 0)
        func tracker() -> OnlineMagnetometerCalibration {
            var t = OnlineMagnetometerCalibration(calibration: MagneticCalibration(offset: a, matrix: .identity), origin: .auto,
                                                  settings: .forLand)
            t.expect(field: Self.field, dip: Self.dip)
            return t
        }
        var refused = tracker()
        guard case .disagreesWithCourse(let misfit, let fitted, let now, let candidate) = Self.straightsThenATurn(&refused, straights: a, turning: b) else {
            return XCTFail("a fit the course does not bear out was not refused")
        }
        print("course checks: in force \(now)°, the turn's fit \(candidate)° about the course")
        XCTAssertLessThan(now, 0.5)
        XCTAssertLessThan(fitted.total, misfit.total, "the fit explains the turn's points better")
        XCTAssertGreaterThan(candidate, 2)
        XCTAssertEqual(refused.inForce.offset, a)

        var borneOut = tracker()
        guard case .accepted(let change) = Self.straightsThenATurn(&borneOut, straights: b, turning: b) else {
            return XCTFail("a fit the course bears out was not taken at once")
        }
        XCTAssertLessThan((change.calibration.offset - b).length, 0.5)

        var noCourse = tracker()
        guard case .held = Self.straightsThenATurn(&noCourse, straights: nil, turning: b) else {
            return XCTFail("without GNSS a fit replacing a good calibration waits for the samples after it")
        }
    }

    /// After a step the fits take the hard iron alone, from `minimumStepRegions` regions. It was 5, fewer than the
    /// smallest fit the calibrator makes (8 samples), and the fits on 5 to 7 failed unseen ("5 usable samples"). A board
    /// turning slowly at 2 °/s, rocking ±5°, with no gyroscope, after a step of 12 µT: no step's fit fails for want of
    /// points, and the first is taken on the eighth region.
    func testAStepsFitIsTriedOnlyOnAsManyPointsAsTheCalibratorFits() throws {
        let jumped = Self.hardIron + Vector3(3, 0, -12)
        var tracker = OnlineMagnetometerCalibration(calibration: MagneticCalibration(offset: Self.hardIron, matrix: .identity),
                                                    origin: .manual, field: Self.field)
        tracker.expect(field: Self.field, dip: Self.dip)
        XCTAssertEqual(tracker.settings.minimumStepRegions, MagnetometerCalibrator.fewestSamples)
        var noise = SplitMix64(seed: 8)
        var outcomes: [(regions: Int, outcome: OnlineMagnetometerCalibration.Outcome)] = []
        for k in 0..<1200 {
            let t = Double(k) / 10
            let q = Quaternion.aboutZ(-2 * t * .pi / 180) * Quaternion(rotationVector: Vector3(0, 5 * sin(t) * .pi / 180, 0))
            let raw = q.conjugate.rotate(Self.earth) + (t < 20 ? Self.hardIron : jumped)
                + Vector3(noise.uniform(-0.3, 0.3), noise.uniform(-0.3, 0.3), noise.uniform(-0.3, 0.3))
            tracker.add(raw, up: q.conjugate.rotate(Vector3(0, 0, 1)), time: t)
            if tracker.steps > 0, tracker.fitDue(at: t) { outcomes.append((tracker.regions, tracker.fit(at: t))) }
        }
        print("a step's fits: " + outcomes.map { "\($0.regions) regions: \(String(describing: $0.outcome).prefix(60))" }.joined(separator: "; "))
        XCTAssertEqual(tracker.steps, 1)
        for (regions, outcome) in outcomes {
            if case .failed(let why) = outcome { XCTFail("a step's fit on \(regions) regions failed: \(why)") }
        }
        let first = try XCTUnwrap(outcomes.first { if case .accepted = $0.outcome { return true }; return false }, "no step's fit taken")
        XCTAssertEqual(first.regions, MagnetometerCalibrator.fewestSamples)
        XCTAssertLessThan((tracker.inForce.offset - jumped).length, 1.0, "hard iron \(tracker.inForce.offset) for \(jumped)")
    }

    /// A car standing at a light beside a lorry: the lorry's field (a fifth of the Earth's, against it) is fixed in the
    /// car's axes while both stand, as a new hard iron would be, for 30 s. With GNSS saying the car stands, that is no
    /// step: it has to hold for `stepTime` with the car moving. A load switched on while it stands, which stays when
    /// it drives off, is a step within `stepTime` of moving. Without GNSS nothing tells the two apart: both are steps.
    func testALorryBesideACarStandingAtALightIsNoStep() {
        let up = Vector3(0, 0, 1)
        // The gyroscope's frame: the level car's, turned by an arbitrary heading (where its integration started).
        let east = Vector3(cos(0.7), -sin(0.7), 0)
        let course = 30.0
        var noise = SplitMix64(seed: 4)
        let still = Self.level(course: course, hardIron: .zero, noise: &noise)
        let lorry = still * -0.2 + Vector3(0, 4, 0)
        /// 80 s standing until `moves`, the car's own field plus `extra(t)`, with a GNSS epoch each second unless
        /// `gnss` is false. Returns the tracker and when its first step came.
        func run(gnss: Bool, moves: Double, extra: (Double) -> Vector3) -> (OnlineMagnetometerCalibration, Double?) {
            var tracker = OnlineMagnetometerCalibration(calibration: MagneticCalibration(offset: Self.hardIron, matrix: .identity),
                                                        origin: .manual, field: Self.field, settings: .forLand)
            tracker.expect(field: Self.field, dip: Self.dip)
            var firstStep: Double?
            for k in 1...800 {
                let t = Double(k) / 10
                if gnss, k % 10 == 0 { tracker.vehicleSpeed(t < moves ? 0.1 : 12, time: t) }
                tracker.add(Self.level(course: course, hardIron: Self.hardIron + extra(t), noise: &noise), up: up, east: east, time: t)
                if tracker.steps > 0, firstStep == nil { firstStep = t }
            }
            return (tracker, firstStep)
        }
        let (beside, besideStep) = run(gnss: true, moves: 45) { t in t >= 10 && t < 40 ? lorry : .zero }
        print("a lorry beside a car standing for 30 s: \(beside.steps) steps, hard iron \(beside.inForce.offset)")
        XCTAssertNil(besideStep, "a lorry beside a standing car taken as a step")
        XCTAssertEqual(beside.inForce, MagneticCalibration(offset: Self.hardIron, matrix: .identity))
        XCTAssertFalse(beside.learning)
        let (load, loadStep) = run(gnss: true, moves: 45) { t in t >= 10 ? lorry : .zero }
        print("a load switched on while the car stands, there when it drives off at 45 s: step at \(loadStep.map { "\($0) s" } ?? "never")")
        XCTAssertEqual(load.steps, 1)
        XCTAssertGreaterThanOrEqual(loadStep ?? 0, 45 + load.settings.stepTime - 0.5)
        XCTAssertLessThan(loadStep ?? .infinity, 45 + load.settings.stepTime + 1.5)
        let (blind, blindStep) = run(gnss: false, moves: 45) { t in t >= 10 && t < 40 ? lorry : .zero }
        XCTAssertEqual(blind.steps, 1, "without GNSS the lorry is a step, as a load would be")
        XCTAssertLessThan(blindStep ?? .infinity, 10 + blind.settings.stepTime + 1.5)
    }

    /// A car without GNSS in a grid of streets: it only ever heads north or east, so a fit of its turn (points in 9 of
    /// 12 heading sectors) never comes, and its corners are all that calibrate it. Its first two corners are taken in a
    /// yard of steel (a field of up to 8.4 µT fixed in the world, strongest in the middle of each turn, for the first two
    /// minutes: each corner's solution is bent by it): the first corner's hard iron is in
    /// force at once and judged by the second, both bent by it. Once the calibration in force is still a corner's, the
    /// next corners go on being solved, each held and judged by the one after it (`solvesCorners`): the car's own hard
    /// iron is back in force after the yard, where before the second corner's judgement ended it and the bent one stayed.
    /// Measured (2026-12-04): the first corner's hard iron 6.7 µT off; the car's own in force from 194.5 s (the corner at
    /// 150 s, judged by the one at 190 s), 0.02 µT off horizontally after 480 s. Run on the code before `solvesCorners`:
    /// never, 6.61 µT off. Bounds: the delay after the yard at 1.5 times, and 0.1 µT.
    func testACarInAGridOfStreetsIsCalibratedByItsNextCorners() {
        let up = Vector3(0, 0, 1)
        var noise = SplitMix64(seed: 9)
        let yard = Vector3(6, -5, 3)  // ENU, µT, at its strongest
        var tracker = OnlineMagnetometerCalibration(calibration: nil, origin: .none, field: Self.field, settings: .forLand)
        tracker.expect(field: Self.field, dip: Self.dip)
        var afterYard: Double?, worstLate = 0.0, changes: [String] = []
        for k in 1...7200 {
            let t = Double(k) / 10
            // Legs of 40 s: 30 s straight, then 10 s turning 90° at 9 °/s, to the east and back to the north in turn.
            let leg = Int(t / 40), into = t - Double(leg) * 40
            let from = leg % 2 == 0 ? 0.0 : 90.0, to = 90 - from
            let course = into < 30 ? from : from + (to - from) * (into - 30) / 10
            let psi = course * .pi / 180
            let forward = Vector3(sin(psi), cos(psi), 0), left = Vector3(-cos(psi), sin(psi), 0)
            let bump = t < 120 && into >= 30 ? sin(Double.pi * (into - 30) / 10) : 0
            let outside = Vector3(forward.dot(yard), left.dot(yard), yard.z) * bump
            let raw = Self.level(course: course, hardIron: Self.hardIron + outside, noise: &noise)
            // The gyroscope's frame: the level car's, turned by an arbitrary 19.9°.
            let frame = (course + 19.9) * .pi / 180
            let east = Vector3(sin(frame), -cos(frame), 0)
            if let c = tracker.add(raw, up: up, east: east, time: t) { changes.append("\(t) s: \(c.summary)") }
            if tracker.fitDue(at: t), case .accepted(let c) = tracker.fit(at: t) { changes.append("\(t) s: \(c.summary)") }
            let off = tracker.inForce.offset - Self.hardIron
            let horizontal = (off.x * off.x + off.y * off.y).squareRoot()
            if t > 120, horizontal < 1, afterYard == nil { afterYard = t }
            if t > 480 { worstLate = max(worstLate, horizontal) }
        }
        print("a car in a grid of streets, its first corners in a yard of steel: the car's own hard iron in force from "
              + "\(afterYard.map { "\($0) s" } ?? "never"), its horizontal part at most \(String(format: "%.2f", worstLate)) µT off "
              + "after 480 s; hard iron in force \(tracker.inForce.offset); changes \(changes)")
        XCTAssertLessThan(afterYard ?? .infinity, 232, "the car's own hard iron back in force, s")
        XCTAssertLessThan(worstLate, 0.1, "the hard iron in force after 480 s, horizontally, µT")
    }

    /// The dip rule for a step's hard iron from the gyroscope's frame (`liesAtTheDip`). A car without GNSS speed reads
    /// its own acceleration as tilt: its filter's "up" leans, and the field followed in the gyroscope's frame
    /// (`frameField`) leans with it, off the Earth field's dip, if the lean comes slowly (faster, the samples leave the
    /// field followed by more than 4 % and it is held where it was). When the lean is gone and a load switches on at
    /// that moment (a step of the hard iron that lasts), a hard iron solved from that field carries the vertical field
    /// times the lean into its horizontal part: at 60° N, 8° of lean is 7 µT, up to 26° of heading. Its misfit cannot
    /// tell: it explains the samples with the Earth's field turned, whose magnitude and dip hold still as the car turns.
    /// The rule leaves such a step to the fits that follow it.
    /// The same drive without the lean is the control: there the step's hard iron comes from the gyroscope.
    /// Measured (2026-12-04): the control's step 0.03 µT off, the heading in the 20 s after the step 4.57° RMS (the
    /// load's 2 µT across the car until the step is found, 10 s); leaning, no solution from the gyroscope and 4.78° (the
    /// step's fit on 8 directions takes the load in); with the rule taken out (`liesAtTheDip` always true), leaning: the
    /// step's hard iron solved from the gyroscope 7.03 µT off and the heading 12.83°. Bounds: 1 µT, and 7° (1.5 times).
    func testAStepIsNotSolvedFromAFieldFollowedWhileTheFrameLeaned() {
        // Helsinki's field: 52 µT, 74° of dip (14 µT horizontal, 50 µT vertical).
        let (norm, dip) = (52.0, 74.0)
        let h = norm * cos(dip * .pi / 180), v = norm * sin(dip * .pi / 180)
        let load = Vector3(0, 2, 7)  // in the car's axes (x forward, y left, z up): mostly vertical, 10 % of the field
        let lean = 8 * Double.pi / 180
        /// 60 s circling at 6 °/s (the field followed at every heading), 190 s straight on to the north while the frame
        /// leans forward by `lean` (coming over 150 s, then held), then the lean gone and the load on at 250 s as the car
        /// turns again. Returns the changes at the step and the heading's RMS error over the 20 s after it.
        func run(leaning: Bool) -> (changes: [CalibrationChange], rms: Double, tracker: OnlineMagnetometerCalibration) {
            var noise = SplitMix64(seed: 31)
            var tracker = OnlineMagnetometerCalibration(calibration: MagneticCalibration(offset: Self.hardIron, matrix: .identity),
                                                        origin: .manual, field: norm, settings: .forLand)
            tracker.expect(field: norm, dip: dip)
            var changes: [CalibrationChange] = [], sum = 0.0, n = 0
            for k in 1...3000 {
                let t = Double(k) / 10
                let course = t < 60 ? 6 * t : t < 250 ? 0 : 6 * (t - 250)
                let psi = course * .pi / 180
                // The level car's field in its axes, and the world's east and up in them.
                var raw = Vector3(h * cos(psi), h * sin(psi), -v) + Self.hardIron
                    + Vector3(noise.uniform(-0.3, 0.3), noise.uniform(-0.3, 0.3), noise.uniform(-0.3, 0.3))
                if t >= 250 { raw = raw + load }
                // The gyroscope's frame: the world's turned by an arbitrary 19.9° of heading, and leaning forward.
                let frame = (course + 19.9) * .pi / 180
                var east = Vector3(sin(frame), -cos(frame), 0), up = Vector3(0, 0, 1)
                let a = leaning && t >= 60 && t < 250 ? lean * min((t - 60) / 150, 1) : 0
                if a > 0 {
                    func leaned(_ x: Vector3) -> Vector3 { Vector3(x.x * cos(a) + x.z * sin(a), x.y, -x.x * sin(a) + x.z * cos(a)) }
                    east = leaned(east)
                    up = leaned(up)
                }
                let stepsBefore = tracker.steps
                let change = tracker.add(raw, up: up, east: east, time: t)
                if tracker.steps > stepsBefore || change?.afterStep == true, let change { changes.append(change) }
                if tracker.fitDue(at: t), case .accepted(let c) = tracker.fit(at: t), c.afterStep { changes.append(c) }
                if t >= 250, t < 270 {
                    let c = tracker.inForce.apply(raw)
                    let e = remainder(atan2(c.y, c.x) * 180 / .pi - course, 360)
                    sum += e * e
                    n += 1
                }
            }
            return (changes, (sum / Double(max(n, 1))).squareRoot(), tracker)
        }
        let control = run(leaning: false)
        let fromGyroscope = control.changes.first { $0.fromGyroscope }
        print("a step on a car whose frame did not lean: \(control.changes.map(\.summary)); the heading after it \(String(format: "%.2f", control.rms))° RMS; "
              + "the step's hard iron \(fromGyroscope.map { String(format: "%.2f", ($0.calibration.offset - Self.hardIron - load).length) } ?? "none") µT off")
        XCTAssertEqual(control.tracker.steps, 1)
        XCTAssertLessThan(fromGyroscope.map { ($0.calibration.offset - Self.hardIron - load).length } ?? .infinity, 1, "the control's step solved from the gyroscope, µT off")
        XCTAssertLessThan(control.rms, 7, "the control's heading in the 20 s after the step, ° RMS")
        let leaned = run(leaning: true)
        print("the same step after the frame leaned 8° forward: \(leaned.changes.map(\.summary)); the heading after it \(String(format: "%.2f", leaned.rms))° RMS")
        XCTAssertEqual(leaned.tracker.steps, 1)
        for c in leaned.changes where c.fromGyroscope {
            XCTFail("a step's hard iron solved from a field followed while the frame leaned: \(String(format: "%.2f", (c.calibration.offset - Self.hardIron - load).length)) µT off")
        }
        XCTAssertLessThan(leaned.rms, 7, "the heading in the 20 s after the step, ° RMS")
    }

    /// Without GNSS a lorry standing beside a standing car for 30 s is a step (above): nothing tells it from a load of
    /// the car's own. Once the car drives off and turns, the calibration from before it holds the field fixed in the
    /// gyroscope's frame far better than the step's (taken with the lorry there) and explains it as the Earth's:
    /// it is put back, within seconds of the turn, instead of the step's learning going on from points the lorry
    /// bent (on the simulated drives a standing board's heading 20–27° off for minutes, `RoadDriveTests`).
    func testALorryTakenForAStepIsUndoneOnceTheCarTurns() {
        let up = Vector3(0, 0, 1)
        var noise = SplitMix64(seed: 4)
        let lorry = Self.level(course: 30, hardIron: .zero, noise: &noise) * -0.2 + Vector3(0, 4, 0)
        let before = MagneticCalibration(offset: Self.hardIron, matrix: .identity)
        var tracker = OnlineMagnetometerCalibration(calibration: before, origin: .manual, field: Self.field, settings: .forLand)
        tracker.expect(field: Self.field, dip: Self.dip)
        var stepAt: Double?, recalledAt: Double?, backAt: Double?, changes: [String] = []
        for k in 1...1200 {
            let t = Double(k) / 10
            // Standing on a course of 30° until 45 s, then turning left at 6 °/s; the gyroscope's frame 19.9° off.
            let course = t < 45 ? 30 : 30 - 6 * (t - 45)
            let psi = (course + 19.9) * .pi / 180
            let east = Vector3(sin(psi), -cos(psi), 0)
            let raw = Self.level(course: course, hardIron: Self.hardIron + (t >= 10 && t < 45 ? lorry : .zero), noise: &noise)
            if let c = tracker.add(raw, up: up, east: east, time: t) {
                changes.append("\(t) s: \(c.summary)")
                if c.recalled, recalledAt == nil { recalledAt = t }
            }
            if tracker.fitDue(at: t), case .accepted(let c) = tracker.fit(at: t) { changes.append("\(t) s: \(c.summary)") }
            if tracker.steps > 0, stepAt == nil { stepAt = t }
            let back = stepAt != nil && (tracker.inForce.offset - Self.hardIron).length < 1
            if back, backAt == nil { backAt = t } else if !back { backAt = nil }
        }
        print("a lorry beside a standing car without GNSS: step at \(stepAt.map { "\($0) s" } ?? "never"), the calibration before it "
              + "recalled at \(recalledAt.map { "\($0) s" } ?? "never"), the car's hard iron back in force from \(backAt.map { "\($0) s" } ?? "never"); changes \(changes); hard iron in force \(tracker.inForce.offset)")
        XCTAssertLessThan(stepAt ?? .infinity, 10 + tracker.settings.stepTime + 1.5, "without GNSS the lorry is a step")
        XCTAssertNotNil(recalledAt, "the calibration from before the lorry never put back")
        XCTAssertLessThan(backAt ?? .infinity, 75, "the car's hard iron in force more than 30 s after it began to turn")
        XCTAssertEqual(tracker.inForce, before)
        XCTAssertFalse(tracker.learning)
    }

    /// Without GNSS a lorry beside a car standing at a light is a step, solved from the gyroscope (above). The lorry
    /// then leaves, and the car goes straight on over the junction: it does not turn, so no earlier calibration is
    /// recalled (`testALorryTakenForAStepIsUndoneOnceTheCarTurns`) and no fit comes, and the lorry's field stayed in
    /// the hard iron until the next corner. The field has come back to what it was before the step, in the gyroscope's
    /// frame as the calibration from before it reads it: the step is undone within `stepTime` of the lorry leaving.
    /// If a load of the car's own switched on while the lorry stood there (4 µT), the field comes back all but the load:
    /// the hard iron is solved again from the field before the step, with the load. A load as strong as the lorry's
    /// field that stays, with no lorry, is a step that stays. On a simulated drive without GNSS (`RoadDriveTests`, seed 122) a car standing 34 s beside
    /// 11.9 µT of the street's field while a load of 3.5 µT switched on kept a hard iron 13.4 µT off for the rest of
    /// the drive, 7–15° of heading.
    func testAStepTakenBesideALorryIsUndoneWhenTheLorryLeavesWithoutATurn() {
        let up = Vector3(0, 0, 1)
        // The gyroscope's frame: the level car's, turned by an arbitrary heading (where its integration started).
        let east = Vector3(cos(0.7), -sin(0.7), 0)
        var noise = SplitMix64(seed: 4)
        let lorry = Self.level(course: 30, hardIron: .zero, noise: &noise) * -0.2 + Vector3(0, 4, 0)
        let load = Vector3(-3, 2.5, 1)
        /// 120 s on a course of 30° (standing until 45 s, then straight on), the lorry beside the car from 10 s to 40 s
        /// if `withLorry`, `extra` from 25 s. Returns the tracker, the first step's time, and from when the hard iron in
        /// force stayed within 1 µT of the car's own plus `extra`.
        func run(withLorry: Bool, extra: Vector3) -> (tracker: OnlineMagnetometerCalibration, step: Double?, right: Double?, changes: [String]) {
            var tracker = OnlineMagnetometerCalibration(calibration: MagneticCalibration(offset: Self.hardIron, matrix: .identity),
                                                        origin: .manual, field: Self.field, settings: .forLand)
            tracker.expect(field: Self.field, dip: Self.dip)
            var stepAt: Double?, rightFrom: Double?, changes: [String] = []
            for k in 1...1200 {
                let t = Double(k) / 10
                let own = Self.hardIron + (t >= 25 ? extra : .zero)
                let raw = Self.level(course: 30, hardIron: own + (withLorry && t >= 10 && t < 40 ? lorry : .zero), noise: &noise)
                if let c = tracker.add(raw, up: up, east: east, time: t) { changes.append("\(t) s: \(c.summary)") }
                if tracker.fitDue(at: t), case .accepted(let c) = tracker.fit(at: t) { changes.append("\(t) s: \(c.summary)") }
                if tracker.steps > 0, stepAt == nil { stepAt = t }
                let right = (tracker.inForce.offset - own).length < 1
                if right, rightFrom == nil { rightFrom = t } else if !right { rightFrom = nil }
            }
            return (tracker, stepAt, rightFrom, changes)
        }
        let f = { (t: Double?) in t.map { String(format: "%.1f s", $0) } ?? "never" }
        let leaves = run(withLorry: true, extra: .zero)
        print("a lorry beside a car standing without GNSS, leaving at 40 s, the car straight on: step at \(f(leaves.step)), "
              + "the car's own hard iron in force from \(f(leaves.right)); changes \(leaves.changes); in force \(leaves.tracker.inForce.offset)")
        XCTAssertLessThan(leaves.step ?? .infinity, 10 + leaves.tracker.settings.stepTime + 1.5, "without GNSS the lorry is a step")
        XCTAssertLessThan(leaves.right ?? .infinity, 40 + leaves.tracker.settings.stepTime + 1.5, "the step undone once the lorry left, s")
        XCTAssertEqual(leaves.tracker.inForce, MagneticCalibration(offset: Self.hardIron, matrix: .identity), "the calibration from before the step")
        let withLoad = run(withLorry: true, extra: load)
        print("the same with a load of \(load) µT switched on at 25 s: the car's own hard iron and the load in force from \(f(withLoad.right)); "
              + "changes \(withLoad.changes); in force \(withLoad.tracker.inForce.offset)")
        XCTAssertLessThan(withLoad.right ?? .infinity, 40 + withLoad.tracker.settings.stepTime + 1.5, "the hard iron with the load, once the lorry left, s")
        let stays = run(withLorry: false, extra: lorry)
        print("a load of the lorry's field switched on at 25 s, no lorry: step at \(f(stays.step)), in force from \(f(stays.right)); changes \(stays.changes)")
        XCTAssertEqual(stays.tracker.steps, 1, "a load that stays is one step")
        XCTAssertLessThan(stays.right ?? .infinity, 25 + stays.tracker.settings.stepTime + 1.5, "the load's step, s")
    }

    /// A step's fit, as any fit, is put in force only once samples it did not see bear it out. After a step the fits
    /// take the hard iron alone from the directions learnt since, and a car that has turned through a third of a
    /// circle since gives them an arc: a field fixed in the world along it (a bridge, a line of parked cars, within the
    /// disturbance thresholds) is then partly a hard iron, and a fit that takes it in explains those points better
    /// than the step's own hard iron, solved from the gyroscope. Taken at once, it was the heading's error on the
    /// straight that followed (5.93° RMS here) until a turn refitted it; on a simulated drive without GNSS
    /// (`RoadDriveTests`, seed 8) a step's fit on 8 directions put the heading 8–11° off for three minutes.
    func testAStepsFitWaitsForSamplesItDidNotSee() {
        let up = Vector3(0, 0, 1)
        let load = Vector3(0, 5, 0)
        // A field fixed in the world (east, north, up): the field 2.7 % stronger and 3° shallower, inside the
        // disturbance thresholds (8 %, 6°).
        let street = Vector3(0, 3, 0)
        var noise = SplitMix64(seed: 12)
        var tracker = OnlineMagnetometerCalibration(calibration: MagneticCalibration(offset: Self.hardIron, matrix: .identity),
                                                    origin: .manual, field: Self.field, settings: .forLand)
        tracker.expect(field: Self.field, dip: Self.dip)
        var changes: [String] = [], stepAt: Double?, sum = 0.0, n = 0
        for k in 1...2200 {
            let t = Double(k) / 10
            // Turning left at 9 °/s (the load on at 40 s), then an arc of 120° at 3 °/s past the street's field from
            // 60 s, straight on from 100 s, and turning again at 6 °/s from 160 s; the gyroscope's frame 19.9° off.
            let course = t < 60 ? 9 * t : t < 100 ? 540 + 3 * (t - 60) : t < 160 ? 660 : 660 + 6 * (t - 160)
            let psi = course * .pi / 180
            let forward = Vector3(sin(psi), cos(psi), 0), left = Vector3(-cos(psi), sin(psi), 0)
            var raw = Self.level(course: course, hardIron: Self.hardIron + (t >= 40 ? load : .zero), noise: &noise)
            if t >= 60, t < 100 { raw = raw + Vector3(forward.dot(street), left.dot(street), street.z) }
            let frame = (course + 19.9) * .pi / 180
            let east = Vector3(sin(frame), -cos(frame), 0)
            if let c = tracker.add(raw, up: up, east: east, time: t) { changes.append("\(t) s: \(c.summary)") }
            if tracker.steps > 0, stepAt == nil { stepAt = t }
            if tracker.fitDue(at: t), case .accepted(let c) = tracker.fit(at: t) { changes.append("\(t) s: \(c.summary)") }
            if t >= 100, t < 160 {
                let c = tracker.inForce.apply(raw)
                let e = remainder(atan2(c.y, c.x) * 180 / .pi - course, 360)
                sum += e * e
                n += 1
            }
        }
        let rms = (sum / Double(max(n, 1))).squareRoot(), off = (tracker.inForce.offset - Self.hardIron - load).length
        print("a step's fit on an arc past a field fixed in the world: step at \(stepAt.map { "\($0) s" } ?? "never"); changes \(changes); "
              + "the heading on the straight after it \(String(format: "%.2f", rms))° RMS; the hard iron in force \(String(format: "%.2f", off)) µT off")
        XCTAssertEqual(tracker.steps, 1)
        XCTAssertLessThan(stepAt ?? .infinity, 40 + tracker.settings.stepTime + 1.5, "the load a step")
        XCTAssertLessThan(rms, 0.7, "the heading on the straight after the arc, ° RMS")
        XCTAssertLessThan(off, 1, "the hard iron in force at the end, µT from the car's")
    }
}

/// The kept online calibration file: written and read back the same; nonsense refused naming the key.
final class OnlineCalibrationRecordTests: XCTestCase {
    func record() -> OnlineCalibrationRecord {
        var tracker = OnlineMagnetometerCalibration(calibration: MagneticCalibration(offset: Vector3(20, -12, 6), matrix: Matrix3([0.95, 0.01, 0], [0.01, 1.04, 0], [0, 0, 1])),
                                                    origin: .manual, field: 49)
        tracker.expect(field: 49, dip: 66)
        let state = OnlineCalibrationState(tracker, mode: .track, time: GPSTimestamp(unixTime: 1_795_000_000), wmm: nil)
        return OnlineCalibrationRecord(state: state, chip: "qmc5883l", sensor: nil, baseline: "2026-11-01T10:00:00.000Z", time: "2026-11-27T04:00:00.000Z")
    }

    func testWrittenAndReadBack() throws {
        let r = record()
        let back = try OnlineCalibrationRecord.decode(r.encoded(), source: "auto.json")
        XCTAssertEqual(back, r)
        XCTAssertEqual(try back.calibration().offset, Vector3(20, -12, 6))
        XCTAssertEqual(back.fieldWMM, 49, "WMM's at the fix where the field held")
        XCTAssertTrue(String(decoding: r.encoded(), as: UTF8.self).contains("\"format\" : \"bearing-online-calibration-1\""))
    }

    /// A calibration learnt before any fix is kept with WMM's magnitude at the fallback position it was scaled to
    /// (`field_fallback`): one started from it scales it at its first fix to WMM's there, in proportion (the offset the
    /// same, the matrix × WMM's at the fix / at the fallback), as the one that learnt it would have. One kept without it
    /// (written at a fix, or before Bearing kept it) is tied to the first fix's field as it is.
    func testACalibrationKeptBeforeAnyFixIsScaledAtTheFirstFixOfTheNextStart() throws {
        let learnt = MagneticCalibration(offset: Vector3(20, -12, 6), matrix: Matrix3([1.3, 0.02, 0], [0.02, 1.25, 0.01], [0, 0.01, 1.2]))
        var state = OnlineCalibrationState(OnlineMagnetometerCalibration(calibration: learnt, origin: .auto, field: 57.0, fieldFallback: 57.0),
                                           mode: .track, time: GPSTimestamp(unixTime: 1_796_000_000), wmm: nil)
        state.misfit = CalibrationMisfit(normPercent: 1, dipDegrees: 0.5, meanDip: 61, meanNorm: 57)
        let kept = try OnlineCalibrationRecord.decode(OnlineCalibrationRecord(state: state, chip: "qmc5883l", sensor: nil, baseline: nil, time: "2026-12-07T10:00:00.000Z").encoded(),
                                                      source: "auto.json")
        XCTAssertEqual(kept.fieldFallback, 57.0)
        XCTAssertNil(kept.fieldWMM)
        var started = OnlineMagnetometerCalibration(calibration: try kept.calibration(), origin: .auto, field: kept.field,
                                                    fieldWMM: kept.fieldWMM, fieldFallback: kept.fieldFallback)
        XCTAssertNil(started.expect(field: 57.0, dip: -64, atTheFix: false), "the fallback position's field again: nothing to scale")
        let change = try XCTUnwrap(started.expect(field: 48.8, dip: 66), "scaled at the first fix")
        XCTAssertEqual(try XCTUnwrap(change.scaled), 48.8 / 57.0, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(started.field), 48.8, accuracy: 1e-9)
        XCTAssertEqual(started.inForce.offset, learnt.offset)
        for (row, before) in zip(started.inForce.matrix.rows, learnt.matrix.rows) {
            XCTAssertEqual((row - before * (48.8 / 57.0)).length, 0, accuracy: 1e-12)
        }
        XCTAssertNil(started.fieldFallback, "scaled once")
        XCTAssertNil(started.expect(field: 48.7, dip: 66), "then it follows WMM's from fix to fix")
        XCTAssertEqual(try XCTUnwrap(started.field), 48.7, accuracy: 1e-9)
        var tied = OnlineMagnetometerCalibration(calibration: learnt, origin: .auto, field: 57.0)
        XCTAssertNil(tied.expect(field: 48.8, dip: 66))
        XCTAssertEqual(tied.field, 57.0, "no field_fallback: tied to the first fix's")
    }

    func testNonsenseIsRefusedNamingTheKey() throws {
        func refused(_ edit: (inout [String: Any]) -> Void) -> String {
            var o = try! JSONSerialization.jsonObject(with: record().encoded()) as! [String: Any]
            edit(&o)
            let data = try! JSONSerialization.data(withJSONObject: o)
            do {
                _ = try OnlineCalibrationRecord.decode(data, source: "auto.json")
                return "accepted"
            } catch {
                return error.message
            }
        }
        XCTAssertTrue(refused { $0["matrix"] = [[1, 0, 0], [0, 1, 0], [0, 0, -1]] }.contains("\"matrix\" has determinant -1"))
        XCTAssertTrue(refused { $0["matrix"] = [[9, 0, 0], [0, 1, 0], [0, 0, 1]] }.contains("gains"))
        XCTAssertTrue(refused { $0["offset"] = [1, 2] }.contains("\"offset\" must be three finite numbers"))
        XCTAssertTrue(refused { $0["offset"] = [5000, 0, 0] }.contains("beyond ±2000 µT"))
        XCTAssertTrue(refused { $0["format"] = "bearing-online-calibration-9" }.contains("format"))
        XCTAssertTrue(refused { $0["field"] = -3 }.contains("\"field\""))
        XCTAssertTrue(refused { $0["field_wmm"] = 0 }.contains("\"field_wmm\" 0"))
        XCTAssertTrue(refused { $0["field_fallback"] = 5000 }.contains("\"field_fallback\" 5000"))
        XCTAssertTrue(refused { $0.removeValue(forKey: "time") }.contains("missing \"time\""))
        XCTAssertTrue(refused { _ in }.hasPrefix("accepted"))
        let garbage = Data("{\"format\": ".utf8)
        XCTAssertThrowsError(try OnlineCalibrationRecord.decode(garbage, source: "auto.json")) { e in
            XCTAssertTrue("\(e)".contains("auto.json: not an online calibration file: invalid JSON"), "\(e)")
        }
    }
}
