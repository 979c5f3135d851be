import BearingCalibrationWorkflow
import BearingI2C
import BearingModel
import BearingSelfTest
import BearingSimulator
import XCTest

/// `bearing selftest` on register models at rest, in virtual time, each with one fault injected below the bus:
/// every fault must be named by its own line (and a healthy board pass every line).
final class SelfTestTests: XCTestCase {
    /// The board lies level, facing north, near Greenwich (WMM2025 there in 2026: 48.997 µT, dip 66.14°, from the
    /// daemon's own test output, not from this code), chip axes = board axes (x forward, y right, z down).
    static let field = Vector3(19.82, 0, 44.82)
    static let gravityUp = Vector3(0, 0, -9.80665)
    /// White noise as the datasheets give it: QMC5883L 0.2 µT per sample; LSM6DS3 7 mdps/√Hz and 90 µg/√Hz, per
    /// sample at 100 Hz over the 50 Hz band: σ = density · √50.
    static let fieldNoise = 0.2
    static let gyroNoise = 0.007 * 50.0.squareRoot() * .pi / 180
    static let accelNoise = 90e-6 * 9.80665 * 50.0.squareRoot()

    final class VirtualTime {
        var now = 0.0
    }

    struct Rig {
        let bus = SimulatedI2CBus(path: "simulator")
        let time = VirtualTime()
        let magnetometer: QMC5883LModel
        let imu: LSM6DSxModel

        /// `motion(t)`: the angular rate (rad/s, board = chip axes) at virtual time t; the specific force stays 1 g up.
        /// `field(t)`: the field the magnetometer senses at virtual time t (board = chip axes), by default still.
        init(motion: @escaping (Double) -> Vector3 = { _ in .zero }, field: @escaping (Double) -> Vector3 = { _ in SelfTestTests.field }) {
            let time = self.time
            magnetometer = QMC5883LModel(field: { field(time.now) })
            imu = LSM6DSxModel(variant: .lsm6dsox, motion: {
                Motion(specificForce: SelfTestTests.gravityUp, angularRate: motion(time.now) + Vector3(0.002, -0.001, 0.0015))
            })
            magnetometer.faults.fieldNoise = SelfTestTests.fieldNoise
            imu.faults.accelerationNoise = SelfTestTests.accelNoise
            imu.faults.angularRateNoise = SelfTestTests.gyroNoise
            magnetometer.faults.clock = { time.now }
            imu.faults.clock = { time.now }
            bus.attach(magnetometer, at: 0x0d)
            bus.attach(imu, at: 0x6a)
        }

        func run(moves: Bool = false) -> [SelfTestLine] {
            let targets = [
                SelfTestRun.Target(kind: .magnetometer, bus: "simulator", chip: "qmc5883l", address: 0x0d, rate: 50, orientation: .identity),
                SelfTestRun.Target(kind: .imu, bus: "simulator", chip: "lsm6dsx", address: 0x6a, rate: 100, orientation: .identity),
            ]
            let bus = self.bus, time = self.time
            var r = SelfTestRun(targets: targets, now: 1_795_000_000) { _ throws(I2CError) in bus }
            r.position = (51, 0)
            r.moves = moves
            r.clock = { time.now }
            r.sleep = { time.now += max($0, 1e-4) }
            let lines = r.run()
            print(SelfTestReport(lines: lines).table)
            return lines
        }
    }

    static func line(_ lines: [SelfTestLine], _ sensor: String, _ check: String, file: StaticString = #filePath, line: UInt = #line) throws -> SelfTestLine {
        try XCTUnwrap(lines.first { $0.sensor == sensor && $0.check == check }, "no \(sensor) \(check) line in \(lines.map { "\($0.sensor) \($0.check)" })",
                      file: file, line: line)
    }

    /// The only failing lines are `expected` (sensor, check).
    static func assertFails(_ lines: [SelfTestLine], only expected: Set<String>, file: StaticString = #filePath, line: UInt = #line) {
        let failed = Set(lines.filter { $0.verdict == .fail }.map { "\($0.sensor) \($0.check)" })
        XCTAssertEqual(failed, expected, file: file, line: line)
    }

    func testAHealthyBoardPassesEveryLine() throws {
        let lines = Rig().run()
        XCTAssertEqual(lines.filter { $0.verdict != .pass }.map { "\($0.sensor) \($0.check): \($0.measured)" }, [])
        for (sensor, check) in [("magnetometer", "rate"), ("magnetometer", "noise"), ("magnetometer", "field"), ("magnetometer", "dip"),
                                ("magnetometer", "registers"), ("imu", "rate"), ("gyroscope", "noise"), ("accelerometer", "noise"),
                                ("gyroscope", "bias"), ("accelerometer", "gravity"), ("imu", "i2c errors")] {
            XCTAssertEqual(try Self.line(lines, sensor, check).verdict, .pass, "\(sensor) \(check)")
        }
    }

    func testAStuckAxisIsNamed() throws {
        let rig = Rig()
        rig.magnetometer.faults.stuckAxis = 1
        let lines = rig.run()
        let stuck = try Self.line(lines, "magnetometer", "stuck axis")
        XCTAssertEqual(stuck.verdict, .fail)
        XCTAssertTrue(stuck.measured.hasPrefix("y never changes"), stuck.measured)
        Self.assertFails(lines, only: ["magnetometer stuck axis"])
    }

    func testASaturatedAxisIsNamed() throws {
        let rig = Rig()
        rig.imu.faults.saturatedAxis = 0
        let lines = rig.run()
        let accel = try Self.line(lines, "accelerometer", "saturated")
        XCTAssertEqual(accel.verdict, .fail)
        XCTAssertTrue(accel.measured.contains("axis x"), accel.measured)
        Self.assertFails(lines, only: ["accelerometer saturated", "gyroscope saturated"])
    }

    func testASlowRateIsNamed() throws {
        let rig = Rig()
        rig.magnetometer.faults.outputRate = 20
        let lines = rig.run()
        let rate = try Self.line(lines, "magnetometer", "rate")
        XCTAssertEqual(rate.verdict, .fail, rate.measured)
        Self.assertFails(lines, only: ["magnetometer rate"])
    }

    func testANoisyChipIsNamed() throws {
        let rig = Rig()
        rig.magnetometer.faults.fieldNoise = 20 * Self.fieldNoise
        let lines = rig.run()
        let noise = try Self.line(lines, "magnetometer", "noise")
        XCTAssertEqual(noise.verdict, .fail, noise.measured)
        Self.assertFails(lines, only: ["magnetometer noise"])
    }

    func testACloneThatAnswersOnlyToTheIDIsNamed() throws {
        let rig = Rig()
        rig.magnetometer.faults.clone = true
        let lines = rig.run()
        let registers = try Self.line(lines, "magnetometer", "registers")
        XCTAssertEqual(registers.verdict, .fail, registers.measured)
        XCTAssertTrue(registers.fix?.contains("clone") == true, registers.fix ?? "")
        XCTAssertEqual(try Self.line(lines, "magnetometer", "chip").verdict, .pass, "it answers to the ID")
    }

    func testANACKingAddressIsNamed() throws {
        let rig = Rig()
        rig.bus.unplug(0x0d)
        let lines = rig.run()
        let chip = try Self.line(lines, "magnetometer", "chip")
        XCTAssertEqual(chip.verdict, .fail)
        XCTAssertTrue(chip.measured.contains("nothing answers at 0x0d on simulator"), chip.measured)
        Self.assertFails(lines, only: ["magnetometer chip"])
    }

    func testABoardThatMovesIsToldToLieStillNotCalledNoisy() throws {
        // Turning at 20 °/s and rocking: the IMU's accelerometer sees the gravity turn through its axes.
        let rig = Rig(motion: { t in Vector3(0.3 * sin(t), 0.2 * cos(1.3 * t), 0.35) })
        rig.imu.motion = { [time = rig.time] in
            let t = time.now
            return Motion(specificForce: Vector3(3 * sin(t), 2 * cos(1.3 * t), -9.2), angularRate: Vector3(0.3 * sin(t), 0.2 * cos(1.3 * t), 0.35))
        }
        rig.magnetometer.field = { [time = rig.time] in Vector3(19.82 * cos(0.35 * time.now), -19.82 * sin(0.35 * time.now), 44.82) }
        let lines = rig.run()
        XCTAssertEqual(try Self.line(lines, "imu", "still").verdict, .warn)
        XCTAssertEqual(try Self.line(lines, "magnetometer", "noise").verdict, .warn)
        Self.assertFails(lines, only: [])
    }

    /// A run too short for an Allan deviation at 1 s (under 3 s of samples: the daemon's socket read for 3 s on a
    /// busy machine gave 2.9 s) still sees a board that moves, by the accelerometer's spread, and does not call the
    /// magnetometer noisy for it.
    func testABoardThatMovesIsSeenInARunTooShortForAnAllanDeviation() throws {
        var mag = SensorRun(kind: .magnetometer, chip: "qmc5883l", display: "QMC5883L", endpoint: "i2c:simulator:0x0d", configuredRate: 20)
        var imu = SensorRun(kind: .imu, chip: "lsm6dsx", display: "LSM6DSOX", endpoint: "i2c:simulator:0x6a", configuredRate: 50)
        // 2.9 s evenly spaced, turning at 20 °/s and rocking ±3 m/s² (as `testABoardThatMovesIsToldToLieStillNotCalledNoisy`).
        for k in 0..<58 {
            let t = Double(k) / 20
            mag.field.append(t, Vector3(19.82 * cos(0.35 * t), -19.82 * sin(0.35 * t), 44.82 + 0.5 * sin(t)))
        }
        for k in 0..<145 {
            let t = Double(k) / 50
            imu.acceleration.append(t, Vector3(3 * sin(t), 2 * cos(1.3 * t), -9.2 + 0.3 * sin(t)))
            imu.angularRate.append(t, Vector3(0.3 * sin(t), 0.2 * cos(1.3 * t), 0.35 + 0.02 * sin(t)))
        }
        XCTAssertNil(imu.acceleration.allanDeviation(tau: 1), "the premise: too short for an Allan deviation at 1 s")
        let lines = SelfTestJudge.judgedTogether(SelfTestJudge.judge(mag) + SelfTestJudge.judge(imu))
        print(SelfTestReport(lines: lines).table)
        XCTAssertEqual(try Self.line(lines, "imu", "still").verdict, .warn)
        XCTAssertEqual(try Self.line(lines, "magnetometer", "noise").verdict, .warn)
        Self.assertFails(lines, only: [])
    }

    /// Samples the chip made but the test never saw (the daemon's reader ran late on a busy CPU, or the test read the
    /// daemon's socket too slowly) leave gaps that look like a slow, noisy chip. Said so, they are not judged as the
    /// chip's: the rate and noise lines say why, and nothing fails for them.
    func testGapsTheChipDidNotMakeAreNotBlamedOnIt() throws {
        // 3 s at 20 Hz (magnetometer) and 50 Hz (IMU), of which bursts arrived: the first quarter of every 0.4 s.
        var seed: UInt64 = 7
        func noise(_ sigma: Double) -> Double {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return (Double(seed >> 11) / Double(1 << 53) - 0.5) * sigma * 12.0.squareRoot()
        }
        var mag = SensorRun(kind: .magnetometer, chip: "qmc5883l", display: "QMC5883L", endpoint: "i2c:simulator:0x0d", configuredRate: 20)
        for k in 0..<60 where k % 8 < 2 { mag.field.append(Double(k) / 20, Self.field + Vector3(noise(0.1), noise(0.1), noise(0.1))) }
        var imu = SensorRun(kind: .imu, chip: "lsm6dsx", display: "LSM6DSOX", endpoint: "i2c:simulator:0x6a", configuredRate: 50)
        for k in 0..<150 where k % 20 < 5 {
            let t = Double(k) / 50
            imu.acceleration.append(t, Vector3(noise(0.05), noise(0.05), 9.80665 + noise(0.05)))
            imu.angularRate.append(t, Vector3(noise(0.001), noise(0.001), noise(0.001)))
        }
        let blamed = SelfTestJudge.judgedTogether(SelfTestJudge.judge(mag) + SelfTestJudge.judge(imu))
        XCTAssertEqual(try Self.line(blamed, "magnetometer", "rate").verdict, .fail, "the same gaps, unexplained, are the chip's")
        XCTAssertFalse(blamed.filter { $0.verdict == .fail }.isEmpty)
        mag.gaps = "the daemon's reader missed 40 reads (it ran late: the CPU is busy)"
        imu.gaps = "this test lost 120 lines from the daemon's socket"
        let lines = SelfTestJudge.judgedTogether(SelfTestJudge.judge(mag) + SelfTestJudge.judge(imu))
        print(SelfTestReport(lines: lines).table)
        for (sensor, gaps) in [("magnetometer", mag.gaps!), ("imu", imu.gaps!)] {
            let rate = try Self.line(lines, sensor, "rate")
            XCTAssertEqual(rate.verdict, .warn, rate.measured)
            XCTAssertTrue(rate.fix?.contains(gaps) == true, rate.fix ?? "")
        }
        XCTAssertEqual(try Self.line(lines, "magnetometer", "noise").verdict, .warn)
        XCTAssertEqual(try Self.line(lines, "accelerometer", "noise").verdict, .warn)
        XCTAssertEqual(try Self.line(lines, "gyroscope", "noise").verdict, .warn)
        XCTAssertNil(lines.first { $0.check == "rate drift" }, "a drift between bursts is not the chip's")
        XCTAssertEqual(try Self.line(lines, "accelerometer", "gravity").verdict, .pass, "what needs no even spacing is still judged")
        Self.assertFails(lines, only: [])
    }

    /// The guided moves, made by the simulated board once asked (after the 20 s at rest): turn clockwise 90°, tip
    /// the front down 30° and back, roll right 30° and back, each at 30 °/s.
    static func moves(_ t: Double) -> Vector3 {
        let w = 30 * Double.pi / 180
        switch t {
        case 25..<28: return Vector3(0, 0, w)
        case 32..<33: return Vector3(0, -w, 0)
        case 33..<34: return Vector3(0, w, 0)
        case 38..<39: return Vector3(w, 0, 0)
        case 39..<40: return Vector3(-w, 0, 0)
        default: return .zero
        }
    }

    /// The Earth's field in the board's axes through the moves: the board's attitude from the same timeline (yaw,
    /// then pitch, then roll, one at a time from level: each angle the integral of its rate), the field turned into it.
    static func movesField(_ t: Double) -> Vector3 {
        func ramp(_ t: Double, _ a: Double, _ b: Double) -> Double { min(max(t - a, 0), b - a) }
        let yaw = 30 * ramp(t, 25, 28)
        let pitch = -30 * (ramp(t, 32, 33) - ramp(t, 33, 34))
        let roll = 30 * (ramp(t, 38, 39) - ramp(t, 39, 40))
        return Matrix3.rotation(rollDegrees: roll, pitchDegrees: pitch, yawDegrees: yaw).transposed * field
    }

    func testTheGuidedMovesPassWhenTheProfileIsRight() throws {
        let lines = Rig(motion: Self.moves, field: Self.movesField).run(moves: true)
        XCTAssertEqual(try Self.line(lines, "magnetometer", "move: turn").verdict, .pass)
        for move in ["turn", "tip", "roll"] { XCTAssertEqual(try Self.line(lines, "imu", "move: \(move)").verdict, .pass, move) }
        XCTAssertNil(lines.first { $0.check == "orientation" })
    }

    func testAMagnetometerUpsideDownIsNamedWithTheOrientationToUse() throws {
        let rig = Rig(motion: Self.moves, field: Self.movesField)
        rig.magnetometer.faults.upsideDown = true
        let lines = rig.run(moves: true)
        let turn = try Self.line(lines, "magnetometer", "move: turn")
        XCTAssertEqual(turn.verdict, .fail, turn.measured)
        XCTAssertTrue(turn.fix?.contains("magnetometer orientation: \"+X-Y-Z\"") == true, turn.fix ?? "")
        XCTAssertEqual(try Self.line(lines, "magnetometer", "dip").verdict, .warn, "the dip's sign says z too")
        Self.assertFails(lines, only: ["magnetometer move: turn"])
    }

    func testAWrongAxisSignIsNamedWithTheOrientationToUse() throws {
        let rig = Rig(motion: Self.moves, field: Self.movesField)
        // The chip sits turned half a turn about z from what the profile (+X+Y+Z) says.
        rig.imu.faults.turnedHalfAboutZ = true
        let lines = rig.run(moves: true)
        XCTAssertEqual(try Self.line(lines, "imu", "move: turn").verdict, .pass)
        XCTAssertEqual(try Self.line(lines, "imu", "move: tip").verdict, .fail)
        XCTAssertEqual(try Self.line(lines, "imu", "move: roll").verdict, .fail)
        let orientation = try Self.line(lines, "imu", "orientation")
        XCTAssertEqual(orientation.measured, "-X-Y+Z")
        XCTAssertTrue(orientation.fix?.contains("orientation: \"-X-Y+Z\"") == true, orientation.fix ?? "")
    }

    func testTheMarkdownReportRoundsThePositionAndEscapesCells() {
        let report = SelfTestReport(lines: [SelfTestLine("imu", "rate", measured: "a|b", expected: "x", .fail, fix: "do this")],
                                    facts: [("position", SelfTestReport.position(latitude: 51.123456, longitude: -1.98765, precise: false))])
        XCTAssertTrue(report.markdown.contains("51.12, -1.99 (rounded to about 1 km)"), report.markdown)
        XCTAssertFalse(report.markdown.contains("51.1234"), report.markdown)
        XCTAssertTrue(report.markdown.contains("| a\\|b |"), report.markdown)
        XCTAssertTrue(report.markdown.contains("- imu rate: do this"), report.markdown)
        XCTAssertEqual(report.summary, "0 passed, 0 warnings, 1 failed")
    }

    /// The Allan deviation of white noise σ at rate f is σ/√(f τ) (IEEE Std 952): checked on a series whose noise
    /// this test makes.
    func testTheAllanDeviationOfWhiteNoise() throws {
        var random = RoadDriveRandom(seed: 3)
        var s = RestSeries()
        for k in 0..<20_000 { s.append(Double(k) / 100, Vector3(random.gaussian(), 2 * random.gaussian(), 0.5 * random.gaussian())) }
        let a = try XCTUnwrap(s.allanDeviation(tau: 1))
        XCTAssertEqual(a.x, 0.1, accuracy: 0.01)
        XCTAssertEqual(a.y, 0.2, accuracy: 0.02)
        XCTAssertEqual(a.z, 0.05, accuracy: 0.005)
        XCTAssertEqual(try XCTUnwrap(s.rate), 100, accuracy: 1e-9)
    }
}
