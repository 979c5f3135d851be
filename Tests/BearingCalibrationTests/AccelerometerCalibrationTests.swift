@testable import BearingModel
@testable import BearingAttitude
@testable import BearingWire
@testable import BearingPublishing
@testable import BearingCalibration
import BearingSimulator
@testable import BearingMarine
@testable import BearingMQTT
import BearingDaemon
import Foundation
import XCTest

/// The accelerometer calibration on virtual boards with exact truth: `VirtualIMU` held still in a series of
/// poses (moving between them), its accelerometer distorted by a known offset, gain and misalignment.
final class AccelerometerCalibrationTests: XCTestCase {
    /// The chip's distortion: raw = A · true + b (symmetric A, so the symmetric fit can recover it exactly).
    static let offset = Vector3(0.31, -0.22, 0.46)                 // 32, −22, 47 mg
    static let distortion = Matrix3([1.021, 0.004, -0.003], [0.004, 0.984, 0.006], [-0.003, 0.006, 1.012])
    static var trueCorrection: Matrix3 { distortion.inverse! }

    static let faces = VirtualIMU.sixFaces
    static let tilts: [(roll: Double, pitch: Double)] = [(40, 30), (-35, -40), (130, 25), (-140, -30), (60, -55), (-120, 50)]

    /// A board held `hold` seconds in each pose (roll, pitch of its forward-left-up axes), moving `move`
    /// seconds between them; readings at 100 Hz with noise, the accelerometer distorted.
    static func readings(_ poses: [(roll: Double, pitch: Double)], hold: Double = 2, move: Double = 1, heading: Double = 30,
                         accNoise: Double = 0.02, seed: UInt64 = 3,
                         distortion: Matrix3 = distortion, offset: Vector3 = offset) -> [IMUSample] {
        var imu = VirtualIMU.heldPoses(poses, hold: hold, move: move, heading: heading)
        imu.gravity = AccelerometerCalibrator.standardGravity
        imu.accNoise = accNoise
        imu.gyroNoise = 0.003
        imu.gyroBias = Vector3(0.01, -0.02, 0.005)
        imu.seed = seed
        return imu.readings(duration: Double(poses.count) * (hold + move) - move).map { r in
            var s = r.sample
            s.accelerometer = distortion * s.accelerometer + offset
            return s
        }
    }

    static func poses(_ samples: [IMUSample], gyroscope: Bool = true) -> [StaticPose] {
        var d = StaticPoseDetector()
        for s in samples { d.add(time: s.time, specificForce: s.accelerometer, angularRate: gyroscope ? s.gyroscope : nil) }
        d.finish()
        return d.poses
    }

    func testSixPositionsGiveTheAxesModelWithOffsetAndGainRecovered() throws {
        let poses = Self.poses(Self.readings(Self.faces))
        XCTAssertEqual(poses.count, 6)
        let fit = try AccelerometerCalibrator().fit(poses)
        XCTAssertEqual(fit.model, .axes)
        XCTAssertEqual(fit.figures.directions, AxisDirection.allCases)
        XCTAssertEqual(fit.figures.missing, [])
        XCTAssertEqual(fit.figures.spareDegrees, 0)
        XCTAssertTrue(fit.warnings.contains { $0.contains("an exact fit") }, "\(fit.warnings)")
        XCTAssertTrue(fit.passes, "\(fit.failures)")
        // Each pose averages ~180 samples of 0.02 m/s² noise: its mean is good to ~0.0015 m/s² per axis.
        XCTAssertLessThan((fit.correction.offset - Self.offset).length, 0.004, "offset within 0.4 mg: \(fit.correction.offset)")
        let m = fit.correction.matrix.rows, truth = Self.trueCorrection.rows
        XCTAssertEqual(m[0].x, truth[0].x, accuracy: 3e-4)
        XCTAssertEqual(m[1].y, truth[1].y, accuracy: 3e-4)
        XCTAssertEqual(m[2].z, truth[2].z, accuracy: 3e-4)
        XCTAssertEqual(m[0].y, 0, "the axes model has no cross terms")
        XCTAssertEqual(fit.figures.scaleErrorPercent[0], 2.1, accuracy: 0.05)
        XCTAssertEqual(fit.figures.scaleErrorPercent[1], -1.6, accuracy: 0.05)
        XCTAssertEqual(fit.figures.offsetMilliG[2], 0.46 / 9.80665 * 1000, accuracy: 0.3)
    }

    func testFacesAndTiltsGiveTheFullModelWithMisalignmentRecovered() throws {
        let poses = Self.poses(Self.readings(Self.faces + Self.tilts))
        XCTAssertEqual(poses.count, 12)
        let fit = try AccelerometerCalibrator().fit(poses)
        XCTAssertEqual(fit.model, .ellipsoid)
        XCTAssertTrue(fit.passes, "\(fit.failures)")
        XCTAssertLessThan((fit.correction.offset - Self.offset).length, 0.003)
        XCTAssertLessThan(fit.correction.matrix.maxDifference(Self.trueCorrection), 3e-4, "\(fit.correction.matrix)")
        XCTAssertLessThan(fit.figures.residualMilliG, 0.5)
        XCTAssertGreaterThan(fit.figures.spread, AccelerometerCalibrator.minimumSpread)
        // 2 × 0.006 rad between y and z.
        XCTAssertEqual(fit.figures.misalignment, 2 * 0.006 * 180 / .pi, accuracy: 0.05)
        // Every pose is corrected onto g.
        for p in poses { XCTAssertEqual(fit.correction.apply(p.specificForce).length, 9.80665, accuracy: 0.005) }
    }

    func testFreeRotationThroughRandomPosesRecoversTheSameCalibration() throws {
        var rng = SplitMix64(seed: 11)
        let random = (0..<20).map { _ in (roll: rng.uniform(-180, 180), pitch: asin(rng.uniform(-1, 1)) * 180 / .pi) }
        let poses = Self.poses(Self.readings(random, hold: 1.5, move: 0.8, accNoise: 0.05))
        XCTAssertGreaterThanOrEqual(poses.count, 19, "one pose per hold")
        let fit = try AccelerometerCalibrator().fit(poses)
        XCTAssertEqual(fit.model, .ellipsoid)
        XCTAssertTrue(fit.passes, "\(fit.failures)")
        XCTAssertLessThan((fit.correction.offset - Self.offset).length, 0.005)
        XCTAssertLessThan(fit.correction.matrix.maxDifference(Self.trueCorrection), 1.5e-3)
    }

    /// A rotation of the chip's axes cannot be seen from |a|: the fit returns the symmetric part, which
    /// corrects magnitudes exactly (MᵀM equal) and leaves the rotation to the level.
    func testANonSymmetricDistortionIsRecoveredUpToARotation() throws {
        let skew = Matrix3([1.01, 0.01, 0], [-0.008, 0.99, 0.004], [0.002, -0.006, 1.005])
        let poses = Self.poses(Self.readings(Self.faces + Self.tilts, distortion: skew))
        let fit = try AccelerometerCalibrator().fit(poses)
        let m = fit.correction.matrix, truth = skew.inverse!
        XCTAssertLessThan((m.transposed * m).maxDifference(truth.transposed * truth), 6e-4)
        XCTAssertLessThan((fit.correction.offset - Self.offset).length, 0.003)
    }

    func testTheModelAskedForAndTheFallbacks() throws {
        let six = Self.poses(Self.readings(Self.faces))
        XCTAssertThrowsError(try AccelerometerCalibrator(model: .ellipsoid).fit(six)) {
            XCTAssertTrue("\($0)".contains("the ellipsoid model needs at least 9"), "\($0)")
        }
        // Nine poses that are the six faces and three repeats pin down no misalignment.
        let repeats = Self.poses(Self.readings(Self.faces + [(0, 0), (180, 0), (0, 90)]))
        XCTAssertEqual(repeats.count, 9)
        let fallback = try AccelerometerCalibrator().fit(repeats)
        XCTAssertEqual(fallback.model, .axes)
        XCTAssertTrue(fallback.warnings.contains { $0.contains("do not pin down the misalignment") }, "\(fallback.warnings)")
        XCTAssertThrowsError(try AccelerometerCalibrator(model: .ellipsoid).fit(repeats)) {
            XCTAssertTrue("\($0)".contains("spread"), "\($0)")
        }
        XCTAssertThrowsError(try AccelerometerCalibrator(model: .sphere).fit(six))
        XCTAssertThrowsError(try AccelerometerCalibrator().fit(Array(six.prefix(5)))) {
            XCTAssertTrue("\($0)".contains("5 still poses; a calibration needs at least 6"), "\($0)")
        }
    }

    func testMissingDirectionsAndABadPoseMissTheBar() throws {
        // Seven poses, -y never held: the axes fit has its parameters but not its faces.
        let noMinusY = Self.poses(Self.readings([(0, 0), (180, 0), (0, 90), (0, -90), (90, 0), (40, 30), (-35, -40)]))
        let partial = try AccelerometerCalibrator(model: .axes).fit(noMinusY)
        XCTAssertEqual(partial.figures.missing, [.minusY])
        XCTAssertFalse(partial.passes)
        XCTAssertTrue(partial.failures.contains { $0.contains("-y never held up") }, "\(partial.failures)")

        // Pose 9 held in a lift starting up at 0.6 m/s²: still to the detector, 61 mg heavy. Judged by the
        // calibration the other 17 poses give, it stands out; a fit to all of them spreads it thin.
        let more: [(roll: Double, pitch: Double)] = [(20, 60), (-70, 15), (160, -45), (-20, -70), (100, -20), (-160, 40)]
        var samples = Self.readings(Self.faces + Self.tilts + more)
        let lift = samples.first { $0.time >= 25 }!.accelerometer.normalized * 0.6
        for i in samples.indices where samples[i].time >= 24 && samples[i].time < 26 {
            samples[i].accelerometer = samples[i].accelerometer + lift
        }
        let fit = try AccelerometerCalibrator().fit(Self.poses(samples))
        XCTAssertEqual(fit.model, .ellipsoid)
        XCTAssertEqual(fit.figures.worstPose, 9, "\(fit.residuals)")
        XCTAssertEqual(fit.figures.worstMilliG, 61, accuracy: 8)
        XCTAssertLessThan(fit.residuals.map { abs($0) }.max()! * 1000 / 9.80665, 30, "in the fit to all poses it shows at a third of its size")
        XCTAssertFalse(fit.passes)
        XCTAssertTrue(fit.failures.contains { $0.contains("pose 9 is") && $0.contains("it moved or leaned") }, "\(fit.failures)")
        let clean = try AccelerometerCalibrator().fit(Self.poses(Self.readings(Self.faces + Self.tilts + more)))
        XCTAssertLessThan(clean.figures.worstMilliG, 1, "without the lift every pose agrees with the others")
    }

    func testUnitsThatAreNotMetresPerSecondSquaredFailThePlausibilityBar() throws {
        // Readings in g: a "sphere" of radius 1 scaled up tenfold is no accelerometer's gain.
        let inG = Self.readings(Self.faces + [(40, 30)], accNoise: 0.0002, distortion: .identity * (1 / 9.80665), offset: .zero)
        var d = StaticPoseDetector(thresholds: { var t = StaticPoseDetector.Thresholds(); t.accelerometer = 0.01; return t }())
        for s in inG { d.add(time: s.time, specificForce: s.accelerometer, angularRate: s.gyroscope) }
        d.finish()
        let fit = try AccelerometerCalibrator().fit(d.poses)
        XCTAssertTrue(fit.failures.contains { $0.contains("gain error") && $0.contains("check the units") }, "\(fit.failures)")
    }

    // MARK: The pose detector

    func testTheDetectorFindsEachHoldAndIgnoresTheMoves() throws {
        let samples = Self.readings(Self.faces, hold: 2, move: 1)
        let poses = Self.poses(samples)
        XCTAssertEqual(poses.count, 6)
        for (k, p) in poses.enumerated() {
            XCTAssertEqual(p.start, Double(k) * 3, accuracy: 0.15, "pose \(k) starts with its hold")
            XCTAssertEqual(p.duration, 2, accuracy: 0.15)
            XCTAssertEqual(p.samples, 181, accuracy: 15, "the trimmed hold")
            XCTAssertEqual(p.noise, 0.02 * 3.0.squareRoot(), accuracy: 0.005)
            // The gyroscope's bias, measured while still.
            let rate = try XCTUnwrap(p.angularRate)
            XCTAssertLessThan((rate - Vector3(0.01, -0.02, 0.005)).length, 0.001)
        }
        // Accelerometer alone: the same holds.
        XCTAssertEqual(Self.poses(samples, gyroscope: false).count, 6)
    }

    /// Samples missing for a second (a busy board's reader skipping reads, a client of the daemon that lost lines) are
    /// no move: the samples after the gap are judged against the stretch as any are, so a board moved while none came
    /// still ends it. A gap longer than `maximumGap` (2 s) ends it whatever follows; a time that goes back ends it too.
    func testAGapInTheSamplesIsNoMove() throws {
        let samples = Self.readings(Self.faces, hold: 4, move: 1)
        func without(_ ranges: [Range<Double>]) -> [IMUSample] { samples.filter { s in !ranges.contains { $0.contains(s.time) } } }
        // A 1.2 s gap inside the first hold: one pose, as long as the hold.
        let inside = Self.poses(without([1.0..<2.2]))
        XCTAssertEqual(inside.count, 6)
        XCTAssertEqual(try XCTUnwrap(inside.first).duration, 4, accuracy: 0.15)
        // The move between the first two holds unseen (a 1.4 s gap across it): the face after it differs, two poses.
        XCTAssertEqual(Self.poses(without([3.8..<5.2])).count, 6)
        // A gap of 2.5 s inside the first hold ends it: the 0.6 s before and the 0.9 s after are each too short a pose.
        XCTAssertEqual(Self.poses(without([0.6..<3.1])).count, 5)
        // A sample with the time of the one before is no gap either: times on the wire are whole milliseconds, and two
        // reads may fall in one. Every 50th sample of the first hold twice: still one pose, as long as the hold.
        let twice = samples.enumerated().flatMap { i, s in s.time < 4 && i % 50 == 25 ? [s, s] : [s] }
        let repeated = Self.poses(twice)
        XCTAssertEqual(repeated.count, 6)
        XCTAssertEqual(try XCTUnwrap(repeated.first).duration, 4, accuracy: 0.15)
    }

    func testMotionMakesNoPoses() {
        // Tumbling without a pause.
        var tumbling = VirtualIMU(heading: { 20 * $0 })
        tumbling.roll = { 70 * sin($0) }
        tumbling.pitch = { 50 * sin(0.7 * $0) }
        XCTAssertEqual(Self.poses(tumbling.readings(duration: 30).map(\.sample)), [])
        // A level board turning steadily at 15 °/s: the accelerometer is still, the gyroscope is not.
        let turning = VirtualIMU(heading: { 15 * $0 })
        XCTAssertEqual(Self.poses(turning.readings(duration: 10).map(\.sample)), [])
        XCTAssertEqual(Self.poses(turning.readings(duration: 10).map(\.sample), gyroscope: false).count, 1, "without a gyroscope it is still")
        // A level board shaken by engine vibration (0.5 m/s² at 25 Hz).
        var shaken = VirtualIMU(heading: { _ in 0 })
        shaken.linearVibration = 0.5
        XCTAssertEqual(Self.poses(shaken.readings(duration: 10).map(\.sample)), [])
        // Still for less than a second at a time.
        XCTAssertEqual(Self.poses(Self.readings(Self.faces, hold: 0.8, move: 0.5)), [])
    }

    // MARK: The file

    func testTheFileRoundTripsAndBadFilesAreNamed() throws {
        let fit = try AccelerometerCalibrator().fit(Self.poses(Self.readings(Self.faces + Self.tilts)))
        let record = AccelerometerCalibrationRecord(fit: fit, chip: "lsm6dsx", device: "i2c:/dev/i2c-1:0x6a", time: GPSTimestamp(unixTime: 1_795_000_000))
        let data = record.encoded()
        let back = try AccelerometerCalibrationRecord.decode(data, source: "a.json")
        XCTAssertEqual(back, record)
        XCTAssertEqual(try back.correction(), fit.correction)
        XCTAssertEqual(back.units, "m/s2")
        XCTAssertEqual(back.poses.count, 12)
        let text = String(decoding: data, as: UTF8.self)
        for key in ["\"residual_mg\"", "\"offset_mg\"", "\"scale_error_percent\"", "\"directions\"", "\"spread\"", "\"gravity\""] {
            XCTAssertTrue(text.contains(key), key)
        }

        func rejected(_ edit: (inout [String: Any]) -> Void, _ expected: String, line: UInt = #line) throws {
            var o = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
            edit(&o)
            let bad = try JSONSerialization.data(withJSONObject: o)
            XCTAssertThrowsError(try AccelerometerCalibrationRecord.decode(bad, source: "a.json"), line: line) {
                XCTAssertTrue("\($0)".hasPrefix("a.json: ") && "\($0)".contains(expected), "\($0)", line: line)
            }
        }
        try rejected({ $0["units"] = "g" }, "units \"g\"")
        try rejected({ $0["chip"] = "" }, "\"chip\" is empty")
        try rejected({ $0["model"] = "planar" }, "axes or ellipsoid")
        try rejected({ $0["offset"] = [6, 0, 0] }, "more than half a g")
        try rejected({ $0["matrix"] = [[1, 0, 0], [0, 1, 0], [0, 0, -1]] }, "mirror")
        try rejected({ $0["matrix"] = [[3, 0, 0], [0, 1, 0], [0, 0, 1]] }, "outside 0.5…2")
        try rejected({ $0["format"] = "bearing-calibration/1" }, "is not \"bearing-accelerometer-calibration/1\"")
        try rejected({ $0.removeValue(forKey: "gravity") }, "missing \"gravity\"")
        XCTAssertThrowsError(try AccelerometerCalibrationRecord.decode(Data("{\"format\":".utf8), source: "a.json")) {
            XCTAssertEqual("\($0)", "a.json: not an accelerometer calibration file: invalid JSON")
        }
    }
}
