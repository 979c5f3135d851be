import BearingAttitude
import BearingCompass
import BearingPublishing
import OpenCombine
import BearingModel
import BearingWire
import BearingCalibration
import BearingOnlineCalibration
import BearingSensors
import BearingSimulator
import XCTest
import Synchronization

/// The fused compass stage on exact sensor values from `VirtualIMU`, each sensor on its own clock.
final class AttitudeFusionTests: XCTestCase {
    static let start = 1_780_000_000.0
    static let sydney = LocalField.wmm(.wmm2025, latitude: -33.9, longitude: 151.2, heightKm: 0, year: 2026.4, source: .fallback)

    /// A board heeled 20° to starboard, nose 5° up, heading 100° magnetic, in Sydney's field (dip ≈ −64°).
    func heeledBoard() -> VirtualIMU {
        var v = VirtualIMU(heading: { _ in 100 })
        v.roll = { _ in 20 }
        v.pitch = { _ in 5 }
        v.fieldNorm = Self.sydney.reference.norm
        v.dip = Self.sydney.reference.dip
        return v
    }

    /// The sensors in their chips' axes: both chips mounted "+X-Y-Z" (chip Z up, board z down), the IMU at
    /// 100 Hz, the magnetometer at 20 Hz three milliseconds later.
    func inputs(_ board: VirtualIMU, seconds: Double, gyroscope: Bool = true) -> [FusionInput] {
        let chip = try! Orientation(axes: "+X-Y-Z")
        func toChip(_ flu: Vector3) -> Vector3 { chip.matrix.transposed * Vector3(flu.x, -flu.y, -flu.z) }
        var out: [FusionInput] = [.calibration(nil), .localField(Self.sydney)]
        for k in 0...Int(seconds * 100) {
            let t = Double(k) / 100
            let s = board.sensed(at: t)
            out.append(.inertial(InertialSample(time: GPSTimestamp(unixTime: Self.start + t), device: "imu", chip: "lsm6dsx",
                                                acceleration: toChip(s.specificForce),
                                                angularRate: gyroscope ? toChip(s.angularRate) : nil)))
            if k % 5 == 0 {
                let tm = t + 0.003
                out.append(.magnetic(MagneticSample(time: GPSTimestamp(unixTime: Self.start + tm), device: "mag", chip: "qmc5883l",
                                                    field: toChip(board.sensed(at: tm).field))))
            }
        }
        return out
    }

    func fusion() -> AttitudeFusion {
        let chip = try! Orientation(axes: "+X-Y-Z")
        return AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: true)
    }

    func testHeeledBoardReadsTrueTiltCompensatedHeadingRollAndPitch() throws {
        var f = fusion()
        var last: Attitude?
        var emitted = 0
        for input in inputs(heeledBoard(), seconds: 10) {
            f.step(input)
            if let a = f.emitted { last = a; emitted += 1 }
        }
        let a = try XCTUnwrap(last)
        // One attitude per inertial sample from the second field sample on (the first starts the
        // magnetometer's clock): the five inertial samples before 0.053 s give none.
        XCTAssertEqual(emitted, 995)
        let declination = Self.sydney.declination.value
        XCTAssertEqual(a.magneticHeading, 100, accuracy: 1)
        XCTAssertEqual(try XCTUnwrap(a.heading), Compass.normalize(100 + declination), accuracy: 1)
        XCTAssertEqual(try XCTUnwrap(a.roll), 20, accuracy: 0.5)
        XCTAssertEqual(try XCTUnwrap(a.pitch), 5, accuracy: 0.5)
        XCTAssertEqual(try XCTUnwrap(a.yaw), try XCTUnwrap(a.heading), accuracy: 1e-9, "yaw is the quaternion's heading, true here")
        XCTAssertEqual(a.declination, declination)
        XCTAssertEqual(a.declinationSource, .fallback)
        XCTAssertEqual(a.magStatus, "C")
        XCTAssertEqual(a.dip, Self.sydney.reference.dip, accuracy: 1, "the dip is the field's own, not the board's tilt")

        // The same board read as a level compass would be far off: that is what the IMU fixes.
        let levelHeading = Compass.magneticHeading(a.field)
        var levelError = abs(levelHeading - 100).truncatingRemainder(dividingBy: 360)
        if levelError > 180 { levelError = 360 - levelError }
        XCTAssertGreaterThan(levelError, 10)

        // Specific force in m/s² in the board frame (z down: about −g·cos(heel)·cos(pitch) on z).
        let acc = try XCTUnwrap(a.acceleration)
        XCTAssertEqual(acc.length, 9.81, accuracy: 0.01)
        XCTAssertEqual(acc.z, -9.81 * cos(20 * .pi / 180) * cos(5 * .pi / 180), accuracy: 0.01)
        XCTAssertEqual(try XCTUnwrap(a.angularRate).length, 0, accuracy: 1e-6)
        let q = try XCTUnwrap(a.quaternion)
        XCTAssertEqual(AttitudeAngles(q, body: .forwardRightDown).heading, try XCTUnwrap(a.heading), accuracy: 1e-9)
    }

    /// The fusion stage hands the filter and online calibration the instant a field sample describes
    /// (`AttitudeFilterParameters.magDelay`, worked out once per sample: `AttitudeFilter.fieldLead(_:)`). A heeled board
    /// turning at 120 °/s, its field samples 20 ms old at their stamps, online calibration learning: with `magDelay`
    /// 0.02 s the magnetic heading is the board's; without, the field is judged in an orientation 17 ms later (the
    /// last inertial sample's, 3 ms before the stamp) and the heading lags by about 2°.
    func testTheStageJudgesAFieldSampleAtTheInstantItDescribes() throws {
        let chip = try Orientation(axes: "+X-Y-Z")
        func toChip(_ flu: Vector3) -> Vector3 { chip.matrix.transposed * Vector3(flu.x, -flu.y, -flu.z) }
        var board = VirtualIMU(heading: { t in 120 * t })
        board.roll = { _ in 15 }
        board.fieldNorm = Self.sydney.reference.norm
        board.dip = Self.sydney.reference.dip
        func meanHeadingLag(magDelay: Double?) -> Double {
            var parameters = AttitudeFilterParameters()
            parameters.magDelay = magDelay
            var f = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: false, parameters: parameters, auto: .track)
            f.step(.calibration(nil))
            f.step(.localField(Self.sydney))
            var lags: [Double] = []
            for k in 0...Int(30 * 100) {
                let t = Double(k) / 100
                let s = board.sensed(at: t)
                f.step(.inertial(InertialSample(time: GPSTimestamp(unixTime: Self.start + t), device: "imu", chip: "lsm6dsx",
                                                acceleration: toChip(s.specificForce), angularRate: toChip(s.angularRate))))
                if t >= 20, let a = f.emitted {
                    lags.append(Compass.normalize(board.heading(t) - a.magneticHeading + 180) - 180)
                }
                if k % 5 == 0 {
                    let stamp = t + 0.003
                    f.step(.magnetic(MagneticSample(time: GPSTimestamp(unixTime: Self.start + stamp), device: "mag", chip: "qmc5883l",
                                                    field: toChip(board.sensed(at: stamp - 0.02).field))))
                }
            }
            return lags.reduce(0, +) / Double(lags.count)
        }
        let judgedAtItsInstant = meanHeadingLag(magDelay: 0.02), atHand = meanHeadingLag(magDelay: nil)
        print(String(format: "turning at 120 °/s, field 20 ms old: heading lag %.3f° with magDelay 0.02 s, %.3f° without", judgedAtItsInstant, atHand))
        XCTAssertEqual(judgedAtItsInstant, 0, accuracy: 0.2)
        XCTAssertEqual(atHand, 2.04, accuracy: 0.3, "the case is one where the instant matters")
    }

    /// An accelerometer without a gyroscope (LSM303): the same stage becomes a tilt-compensated compass
    /// with short time constants, and ATT carries no gyro fields.
    func testAccelerometerWithoutGyroscopeTiltCompensatesAndFollowsATurn() throws {
        var f = fusion()
        var last: Attitude?
        for input in inputs(heeledBoard(), seconds: 10, gyroscope: false) { f.step(input); last = f.emitted ?? last }
        XCTAssertEqual(f.filter.parameters, .withoutGyroscope)
        var a = try XCTUnwrap(last)
        XCTAssertNil(a.angularRate)
        XCTAssertEqual(a.magneticHeading, 100, accuracy: 0.5)
        XCTAssertEqual(try XCTUnwrap(a.roll), 20, accuracy: 0.5)
        XCTAssertEqual(try XCTUnwrap(a.pitch), 5, accuracy: 0.5)

        // A step turn of 90°: with τ = 1 s the heading is within a degree after 8 s (a gyro-less filter
        // with VQF's τ_mag = 9 s would still be ~37° short).
        var turned = heeledBoard()
        turned.heading = { _ in 190 }
        let later = { (t: GPSTimestamp) in GPSTimestamp(unixTime: t.unixTime + 10.01) }
        for input in inputs(turned, seconds: 8, gyroscope: false).dropFirst(2) {
            switch input {
            case .inertial(var s): s.time = later(s.time); f.step(.inertial(s))
            case .magnetic(var s): s.time = later(s.time); f.step(.magnetic(s))
            default: continue
            }
            last = f.emitted ?? last
        }
        a = try XCTUnwrap(last)
        XCTAssertEqual(a.magneticHeading, 190, accuracy: 1)
    }

    func testGyroFieldsAreDegreesPerSecond() throws {
        var board = heeledBoard()
        board.roll = { _ in 0 }
        board.pitch = { _ in 0 }
        board.heading = { 100 + 30 * $0 }  // turning clockwise at 30°/s
        var f = fusion()
        var last: Attitude?
        for input in inputs(board, seconds: 3) { f.step(input); last = f.emitted ?? last }
        let g = try XCTUnwrap(last?.angularRate)
        // Clockwise seen from above is about +z in a z-down frame.
        XCTAssertEqual(g.z, 30, accuracy: 0.01)
        XCTAssertEqual(g.x, 0, accuracy: 0.01)
    }

    func testNothingIsEmittedBeforeAFieldSampleAndMagneticOnlyWithoutDeclination() {
        let chip = try! Orientation(axes: "+X-Y-Z")
        var f = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: true)
        let all = inputs(heeledBoard(), seconds: 1)
        let inertialOnly = all.filter { if case .inertial = $0 { return true }; return false }
        for i in inertialOnly { f.step(i); XCTAssertNil(f.emitted) }
        var g = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: true)
        var last: Attitude?
        for i in all where { if case .localField = $0 { return false }; return true }(i) { g.step(i); last = g.emitted ?? last }
        XCTAssertNotNil(last)
        XCTAssertNil(last?.heading, "no declination: no true heading")
        XCTAssertNil(last?.declination)
        XCTAssertNotNil(last?.quaternion)
    }

    func testTheStageFusesSamplesArrivingOneByOne() throws {
        var stage = FusionStage(fusion())
        stage.start(calibration: nil, localField: Self.sydney)
        var out: [Attitude] = []
        for input in inputs(heeledBoard(), seconds: 5) {
            switch input {
            case .inertial, .magnetic: if let a = stage.step(input) { out.append(a) }
            default: break
            }
        }
        XCTAssertEqual(out.count, 495)
        let last = try XCTUnwrap(out.last)
        XCTAssertEqual(try XCTUnwrap(last.heading), Compass.normalize(100 + Self.sydney.declination.value), accuracy: 1)
        XCTAssertEqual(last.declinationSource, .fallback)
    }

    func testFusedATTCarriesGpsdsFieldsAndPassesSmoothUnchanged() throws {
        var f = fusion()
        var last: Attitude?
        for input in inputs(heeledBoard(), seconds: 2) { f.step(input); last = f.emitted ?? last }
        let a = try XCTUnwrap(last)
        let line = WireEncoding.att(a)
        let m = try WireMessage(line: line)
        for key in ["roll", "pitch", "yaw", "acc_x", "acc_y", "acc_z", "acc_len", "gyro_x", "gyro_y", "gyro_z", "heading", "mheading"] {
            XCTAssertNotNil(m.number(key), "\(key) missing from \(line)")
        }
        let decoded = try XCTUnwrap(m.attitude)
        XCTAssertEqual(try XCTUnwrap(decoded.quaternion).w, try XCTUnwrap(a.quaternion).w, accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(decoded.roll), try XCTUnwrap(a.roll), accuracy: 0.01)
        XCTAssertEqual(WireEncoding.att(a, keep: ["roll", "quat"]).contains("\"mag_x\""), false)
        XCTAssertTrue(WireEncoding.att(a, keep: ["roll", "quat"]).contains("\"quat\":["))
        XCTAssertNoThrow(try OperatorSpec.validate([.fields(["roll", "pitch", "yaw", "quat", "acc_len", "gyro_z"])], for: .att, path: "t"))

        let smoothed = PassthroughSubject<Report, Never>()
        var passed: [Report] = []
        let c = Pipeline.build(smoothed.eraseToAnyPublisher(), [.smooth(samples: 5)], for: .att, scheduler: ImmediateScheduler.shared)
            .sink { passed.append($0) }
        defer { c.cancel() }
        smoothed.send(Report(.attitude(a)))
        XCTAssertEqual(passed.first?.line, WireEncoding.att(a), "a fused attitude passes smooth unchanged")
    }

    // MARK: Accelerometer calibration and mounting level

    /// The accelerometer's distortion in its chip's axes: raw = A · true + b.
    static let accOffset = Vector3(0.4, -0.3, 0.5)
    static let accDistortion = Matrix3([1.03, 0.01, 0], [0.01, 0.97, -0.02], [0, -0.02, 1.02])

    func distorted(_ inputs: [FusionInput]) -> [FusionInput] {
        inputs.map { input in
            guard case .inertial(var s) = input else { return input }
            s.acceleration = Self.accDistortion * s.acceleration + Self.accOffset
            return .inertial(s)
        }
    }

    func run(_ inputs: [FusionInput], into f: inout AttitudeFusion) -> Attitude? {
        var last: Attitude?
        for input in inputs { f.step(input); last = f.emitted ?? last }
        return last
    }

    func testTheAccelerometerCalibrationIsAppliedOnlyToItsChip() throws {
        var undistorted = fusion()
        let truth = try XCTUnwrap(run(inputs(heeledBoard(), seconds: 3), into: &undistorted))
        let correction = AccelerometerCorrection(offset: Self.accOffset, matrix: Self.accDistortion.inverse!)
        for (chip, applied) in [("lsm6dsx", true), ("mpu6xxx", false)] {
            var f = fusion()
            f.step(.accelerometerCalibration(ActiveCalibration(chip: chip, correction: correction)))
            let a = try XCTUnwrap(run(distorted(inputs(heeledBoard(), seconds: 3)), into: &f))
            let error = (try XCTUnwrap(a.acceleration) - (try XCTUnwrap(truth.acceleration))).length
            if applied {
                XCTAssertLessThan(error, 1e-9, "corrected back to the true specific force")
                XCTAssertEqual(try XCTUnwrap(a.roll), try XCTUnwrap(truth.roll), accuracy: 1e-6)
            } else {
                XCTAssertGreaterThan(error, 0.3, "a calibration for \(chip) is not applied to lsm6dsx samples")
            }
        }
        var off = fusion()
        off.step(.accelerometerCalibration(ActiveCalibration(chip: "lsm6dsx", correction: correction)))
        off.step(.accelerometerCalibration(nil))
        let a = try XCTUnwrap(run(distorted(inputs(heeledBoard(), seconds: 3)), into: &off))
        XCTAssertGreaterThan((try XCTUnwrap(a.acceleration) - (try XCTUnwrap(truth.acceleration))).length, 0.3, "nil: none in force")
    }

    /// A board mounted 5° right side down and 3° nose down on a level vehicle heading 100°: with its level
    /// in force it reads roll = pitch = 0 and the same heading, and every vector is in the levelled frame.
    func testTheMountingLevelTakesTheBoardsTiltOut() throws {
        var board = heeledBoard()
        board.roll = { _ in 5 }
        board.pitch = { _ in -3 }
        var plain = fusion()
        let tilted = try XCTUnwrap(run(inputs(board, seconds: 10), into: &plain))
        XCTAssertEqual(try XCTUnwrap(tilted.roll), 5, accuracy: 0.05)
        XCTAssertEqual(try XCTUnwrap(tilted.pitch), -3, accuracy: 0.05)

        let level = MountingLevel(roll: 5, pitch: -3)
        var f = fusion()
        f.step(.level(level))
        XCTAssertEqual(f.level, level)
        let a = try XCTUnwrap(run(inputs(board, seconds: 10), into: &f))
        XCTAssertEqual(try XCTUnwrap(a.roll), 0, accuracy: 0.05)
        XCTAssertEqual(try XCTUnwrap(a.pitch), 0, accuracy: 0.05)
        XCTAssertEqual(a.magneticHeading, 100, accuracy: 0.5)
        XCTAssertEqual(a.magneticHeading, tilted.magneticHeading, accuracy: 0.05, "levelling does not turn the heading")
        let acc = try XCTUnwrap(a.acceleration)
        XCTAssertEqual(acc.x, 0, accuracy: 1e-6)
        XCTAssertEqual(acc.y, 0, accuracy: 1e-6)
        XCTAssertEqual(acc.z, -9.81, accuracy: 1e-6)
        XCTAssertEqual(a.field.length, tilted.field.length, accuracy: 1e-6)
        XCTAssertLessThan((a.field - level.apply(tilted.field)).length, 0.01, "the field vector is levelled too")
        XCTAssertEqual(Compass.magneticHeading(a.field), 100, accuracy: 0.5, "a levelled field reads the heading as a level compass")

        // A level loaded while running restarts the filter in the new frame: settled again within seconds.
        var late = fusion()
        _ = run(inputs(board, seconds: 10), into: &late)
        late.step(.level(level))
        let later = { (t: GPSTimestamp) in GPSTimestamp(unixTime: t.unixTime + 10.01) }
        var after: Attitude?
        for input in inputs(board, seconds: 6).dropFirst(2) {
            switch input {
            case .inertial(var s): s.time = later(s.time); late.step(.inertial(s))
            case .magnetic(var s): s.time = later(s.time); late.step(.magnetic(s))
            default: continue
            }
            after = late.emitted ?? after
        }
        XCTAssertEqual(try XCTUnwrap(after?.roll), 0, accuracy: 0.05)
        XCTAssertEqual(try XCTUnwrap(after?.pitch), 0, accuracy: 0.05)
        XCTAssertEqual(try XCTUnwrap(after).magneticHeading, 100, accuracy: 0.5)
    }

    func testTheStageTakesTheLevelAndAccelerometerCalibrationInForce() throws {
        var stage = FusionStage(fusion())
        stage.start(calibration: nil,
                    accelerometerCalibration: ActiveCalibration(chip: "lsm6dsx", correction: AccelerometerCorrection(offset: Self.accOffset, matrix: Self.accDistortion.inverse!)),
                    level: MountingLevel(roll: 5, pitch: -3), localField: Self.sydney)
        var out: [Attitude] = []
        var board = heeledBoard()
        board.roll = { _ in 5 }
        board.pitch = { _ in -3 }
        for input in distorted(inputs(board, seconds: 8)) {
            switch input {
            case .inertial, .magnetic: if let a = stage.step(input) { out.append(a) }
            default: break
            }
        }
        let last = try XCTUnwrap(out.last)
        XCTAssertEqual(try XCTUnwrap(last.roll), 0, accuracy: 0.05)
        XCTAssertEqual(try XCTUnwrap(last.pitch), 0, accuracy: 0.05)
        XCTAssertEqual(try XCTUnwrap(last.acceleration).z, -9.81, accuracy: 1e-6)
    }

    /// A field sample that comes before any accelerometer sample has no "up": the filter's is then the identity's, a
    /// z-down chip upside down. Online calibration takes it into its direction regions (which need no "up") but not
    /// into the turn's ring, whose fit weighs each point's dip: there its dip was 2 × 64° off, and the point stayed
    /// for 30 minutes unless the car came back to that heading (on the simulated drives without GNSS it kept seed 4
    /// from any calibration for 11 minutes). Once the accelerometer has spoken, samples go into both.
    func testAFieldSampleBeforeTheFirstAccelerometerSampleHasNoUp() throws {
        let board = VirtualIMU(heading: { 6 * $0 })
        let feed = inputs(board, seconds: 2)
        let chip = try Orientation(axes: "+X-Y-Z")
        var f = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: false, auto: .track)
        f.step(.calibration(nil))
        guard case .magnetic(var early)? = feed.first(where: { if case .magnetic = $0 { return true } else { return false } }) else {
            return XCTFail("no field sample")
        }
        early.time = GPSTimestamp(unixTime: Self.start - 0.05)
        f.step(.magnetic(early))
        XCTAssertEqual(try XCTUnwrap(f.online).heldPoints.count, 1, "a direction region's point, and no ring point")
        for input in feed { f.step(input) }
        XCTAssertGreaterThan(try XCTUnwrap(f.online).heldPoints.count, 2, "ring points once there is an up")
    }

    /// A boat turning at 6 °/s, rolling ±12° and pitching ±5°, its magnetometer behind a 20 µT hard iron and
    /// 5 % soft iron: with `calibration.auto: track` the fusion learns them and the heading comes right; the
    /// changes are told once each; `locked` keeps what is in force and `off` has no online calibration.
    func testOnlineCalibrationLearnsTheBoatsIronAndLockedDoesNot() throws {
        let feed = boatWithIron(in: Self.sydney.reference, seconds: 150)
        func headingError(_ auto: AutoCalibrationMode, events: inout [(CalibrationChange?, OnlineCalibrationState)]) -> Double {
            let chip = try! Orientation(axes: "+X-Y-Z")
            var f = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: false, auto: auto)
            let collected = Mutex<[(CalibrationChange?, OnlineCalibrationState)]>([])
            f.onOnlineEvent = { change, state in collected.withLock { $0.append((change, state)) } }
            var sum = 0.0, n = 0
            for input in feed {
                f.step(input)
                if let a = f.emitted, a.time.unixTime - Self.start > 120 {
                    var e = (a.magneticHeading - Compass.normalize(6 * (a.time.unixTime - Self.start))).truncatingRemainder(dividingBy: 360)
                    if e > 180 { e -= 360 } else if e < -180 { e += 360 }
                    sum += e * e
                    n += 1
                }
            }
            events = collected.withLock { $0 }
            return (sum / Double(max(n, 1))).squareRoot()
        }
        var tracked: [(CalibrationChange?, OnlineCalibrationState)] = [], locked: [(CalibrationChange?, OnlineCalibrationState)] = []
        var none: [(CalibrationChange?, OnlineCalibrationState)] = []
        let trackedError = headingError(.track, events: &tracked)
        let lockedError = headingError(.locked, events: &locked)
        let offError = headingError(.off, events: &none)
        print("fusion, boat with a 20 µT hard iron: heading RMS over the last 30 s \(trackedError)° tracked, \(lockedError)° locked, \(offError)° off; "
              + "\(tracked.filter { $0.0 != nil }.count) changes at \(tracked.compactMap { $0.0 == nil ? nil : $0.1.time.unixTime - Self.start }) s")
        // 0.042° measured (changes at 40 and 60 s; 0.037° with one at 60 s while the first field sample, before any
        // accelerometer sample, had the identity's "up").
        XCTAssertLessThan(trackedError, 0.1)
        XCTAssertGreaterThan(lockedError, 5)
        XCTAssertGreaterThan(offError, 5)
        let changes = tracked.compactMap { $0.0 }
        XCTAssertFalse(changes.isEmpty)
        let last = try XCTUnwrap(tracked.last?.1)
        XCTAssertEqual(last.origin, .auto)
        XCTAssertEqual(last.mode, .track)
        XCTAssertEqual(last.wmm, Self.sydney.reference)
        XCTAssertLessThan((last.calibration.offset - Self.boatHardIron).length, 2, "\(last.calibration.offset)")
        XCTAssertTrue(locked.isEmpty)
        XCTAssertTrue(none.isEmpty)
    }

    static let boatHardIron = Vector3(20, -12, 7)

    /// A boat turning at 6 °/s, rolling 12° and pitching 5°, in the field `reference`, for `seconds`: the inputs, its
    /// magnetometer's through a 20 µT hard iron (`boatHardIron`) and a 5 % soft iron.
    func boatWithIron(in reference: MagneticFieldReference, seconds: Double) -> [FusionInput] {
        var board = VirtualIMU(heading: { 6 * $0 })
        board.roll = { 12 * sin(2 * .pi * $0 / 5) }
        board.pitch = { 5 * sin(2 * .pi * $0 / 7) }
        board.fieldNorm = reference.norm
        board.dip = reference.dip
        let soft = Matrix3([1.05, 0.02, 0], [0.02, 0.96, 0.01], [0, 0.01, 1.0]), hard = Self.boatHardIron
        return inputs(board, seconds: seconds).map { input -> FusionInput in
            guard case .magnetic(var s) = input else { return input }
            s.field = soft * s.field + hard
            return .magnetic(s)
        }
    }

    /// The board turning at 6 °/s in Sydney's field for `seconds`, an identity calibration of the QMC5883L in force,
    /// each field sample `strength(t)` times the Earth's (t: seconds since the start), each input with its t (0 for
    /// those that are no sample); and a fusion to take them, tracking online.
    func turningBoard(seconds: Double, strength: (Double) -> Double) -> (feed: [(t: Double, input: FusionInput)], fusion: AttitudeFusion) {
        var board = VirtualIMU(heading: { 6 * $0 })
        board.fieldNorm = Self.sydney.reference.norm
        board.dip = Self.sydney.reference.dip
        let feed = inputs(board, seconds: seconds).map { input -> (t: Double, input: FusionInput) in
            switch input {
            case .calibration: return (0, .calibration(ActiveCalibration(chip: "qmc5883l", correction: .identity)))
            case .magnetic(var s):
                let t = s.time.unixTime - Self.start
                s.field = s.field * strength(t)
                return (t, .magnetic(s))
            case .inertial(let s): return (s.time.unixTime - Self.start, input)
            default: return (0, input)
            }
        }
        let chip = try! Orientation(axes: "+X-Y-Z")
        return (feed, AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: true, auto: .track))
    }

    /// The board turning at 6 °/s for four minutes in a field `scale` times WMM's magnitude at Sydney, `kept` in force
    /// from the start, tracking online, the gyroscope `bias` °/s off about the vertical, WMM's field given as `local`
    /// (Sydney's, the fallback position's, unless given); `each` is given the fusion and each ATT from 60 s on.
    func turningWithAKeptCalibration(scale: Double, kept: ActiveCalibration, bias: Double = 0, local: LocalField = sydney,
                                     each: (AttitudeFusion, Attitude) -> Void) throws {
        var board = VirtualIMU(heading: { 6 * $0 })
        board.fieldNorm = Self.sydney.reference.norm * scale
        board.dip = Self.sydney.reference.dip
        let chip = try Orientation(axes: "+X-Y-Z")
        var f = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: false, auto: .track)
        for input in inputs(board, seconds: 240) {
            switch input {
            case .calibration: f.step(.calibration(kept))
            case .localField: f.step(.localField(local))
            case .inertial(var s):
                s.angularRate = s.angularRate.map { $0 + Vector3(0, 0, bias * .pi / 180) }
                f.step(.inertial(s))
            default: f.step(input)
            }
            if let a = f.emitted, a.time.unixTime - Self.start >= 60 { each(f, a) }
        }
    }

    /// A kept calibration that scales the field to another magnitude than WMM's at the fix (one learnt before the first
    /// fix, scaled to the fitted radius; a chip whose gain is off): the daemon gives the filter WMM's field as the
    /// reference, and the field the board turns in is 15 % stronger or weaker than it for good. It must not be judged
    /// disturbed for ever, the heading riding its gyroscope (0.3 °/s off here) and following the field at half the rate:
    /// the board turning at 6 °/s in Sydney's field for 4 minutes, its heading from 60 s on against the same board with the
    /// field at WMM's magnitude. (The kept calibration says no magnitude: WMM's is the one it is judged by.)
    func testAKeptCalibrationScaledOffWMMsFieldIsNoDisturbanceForEver() throws {
        /// The share of ATTs from 60 s on with the field judged disturbed, and their heading error's RMS.
        func drive(scale: Double) throws -> (disturbed: Double, rms: Double) {
            var disturbed = 0, errors: [Double] = []
            try turningWithAKeptCalibration(scale: scale, kept: ActiveCalibration(chip: "qmc5883l", correction: .identity, origin: .auto), bias: 0.3) { f, a in
                if f.filter.magnetic.disturbed { disturbed += 1 }
                errors.append(remainder(a.magneticHeading - 6 * (a.time.unixTime - Self.start), 360))
            }
            return (Double(disturbed) / Double(max(1, errors.count)), (errors.map { $0 * $0 }.reduce(0, +) / Double(max(1, errors.count))).squareRoot())
        }
        let right = try drive(scale: 1)
        var lines = [String(format: "at WMM's magnitude disturbed %.0f %% of the time from 60 s, heading RMS %.2f°", 100 * right.disturbed, right.rms)]
        for scale in [1.15, 0.85] {
            let r = try drive(scale: scale)
            lines.append(String(format: "%.0f %% of it: %.0f %%, %.2f°", 100 * scale, 100 * r.disturbed, r.rms))
            XCTAssertEqual(r.disturbed, 0, "\(scale): the field the board turns in is no disturbance from 60 s on")
            XCTAssertLessThan(r.rms, right.rms * 1.2 + 0.2, "\(scale)")
        }
        print("fusion, a kept calibration scaled off WMM's field, the gyroscope 0.3 °/s off: " + lines.joined(separator: "; "))
    }

    /// A kept calibration's field (its file's `field`: the magnitude it scales the field to) is the one online
    /// calibration judges the field by, not WMM's at the fix: a kept calibration learnt before the first fix, scaled to
    /// the fitted radius 15 % over (or under) WMM's, its hard iron 2 µT off, on the board turning at 6 °/s. Judged by
    /// WMM's magnitude, every sample was interference (norm) for good and nothing was learnt; at WMM's own magnitude the
    /// 2 µT are learnt within the four minutes. (3 µT off at 15 % over is taken for a step of the hard iron, solved 2.4 µT
    /// off against the field followed under the kept calibration, and the step's fit ends it 60 s later, the 3 µT learnt:
    /// interference for 12 % of the time from 60 s. Until the step's fit on a ring was mended, online calibration stayed
    /// learning for good: `testAStepOfTheHardIronOnALevelTurningBoardEnds`.)
    func testAKeptCalibrationsFieldIsTheMagnitudeOnlineCalibrationJudgesBy() throws {
        var lines: [String] = []
        for scale in [1.0, 1.15, 0.85] {
            let kept = ActiveCalibration(chip: "qmc5883l", correction: MagneticCalibration(offset: Vector3(2, 0, 0), matrix: .identity),
                                         origin: .auto, field: Self.sydney.reference.norm * scale)
            var flagged = 0, counted = 0, offset = Double.nan
            try turningWithAKeptCalibration(scale: scale, kept: kept) { f, _ in
                counted += 1
                if f.online?.interference != nil { flagged += 1 }
                offset = f.online?.inForce.offset.length ?? .nan
            }
            let interference = Double(flagged) / Double(max(1, counted))
            lines.append(String(format: "%.0f %% of WMM's: interference %.0f %% of the time from 60 s, hard iron left %.2f µT", 100 * scale, 100 * interference, offset))
            XCTAssertEqual(interference, 0, "\(scale)")
            XCTAssertLessThan(offset, 0.5, "\(scale): the 2 µT are learnt")
        }
        print("fusion, a kept calibration's field: " + lines.joined(separator: "; "))
    }

    /// The daemon's fallback position (`heading.fallback_position`) gives WMM's field there until the first fix. Online
    /// calibration took that magnitude as the one to scale to, for good, and judged its quality by it against WMM's at
    /// the fix: with the fallback in Sydney (57.0 µT) and the board in Southampton's field (48.8 µT), its first fix 5 s
    /// in, long before any fit, every fit scaled the field 17 % over WMM's at the fix and the compass quality was "poor"
    /// for good (Home Assistant's sensor, the page). WMM's at the fix is the magnitude to scale to once it comes, where
    /// nothing is scaled to the fallback's yet; a cold start, the boat with its iron (`boatWithIron`) for four minutes.
    func testTheFallbackPositionsFieldGivesWayToTheFixsWhereNothingIsScaledToIt() throws {
        let southampton = LocalField.wmm(.wmm2025, latitude: 50.9, longitude: -1.4, heightKm: 0, year: 2026.4, source: .fix)
        let chip = try Orientation(axes: "+X-Y-Z")
        var f = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: true, auto: .track)
        var fixed = false
        for input in boatWithIron(in: southampton.reference, seconds: 240) {
            if !fixed, case .inertial(let s) = input, s.time.unixTime - Self.start >= 5 {
                f.step(.localField(southampton))
                fixed = true
            }
            f.step(input)
        }
        let o = try XCTUnwrap(f.online)
        let field = try XCTUnwrap(o.field), quality = o.quality(wmm: southampton.reference)
        print(String(format: "fusion, the fallback's field (%.1f µT) then the fix's (%.1f µT): online calibration scales to %.1f µT, %@, quality %@, misfit %.2f %%",
                     Self.sydney.reference.norm, southampton.reference.norm, field, o.origin.rawValue, quality, o.misfit?.normPercent ?? .nan))
        XCTAssertNotEqual(o.origin, .none, "a fit is in force")
        XCTAssertEqual(field, southampton.reference.norm, accuracy: 1e-9)
        XCTAssertEqual(quality, "good")
    }

    /// A calibration learnt before the first fix is scaled to the fallback position's field (here Sydney's, 57.0 µT): a
    /// GPS slow to its first fix, a board far from its fallback (a van or a boat that travelled). At the first fix (the
    /// board is in Southampton, 48.9 µT) it is scaled to WMM's field there, in proportion, an isotropic scale that
    /// leaves the heading. Before, the magnitude it was judged by stayed 57.0 µT, and the compass quality "poor", for
    /// good (400 s after the fix here).
    func testACalibrationLearntBeforeTheFirstFixIsScaledToTheFixsField() throws {
        let southampton = LocalField.wmm(.wmm2025, latitude: 50.9, longitude: -1.4, heightKm: 0, year: 2026.4, source: .fix)
        let chip = try Orientation(axes: "+X-Y-Z")
        var f = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: true, auto: .track)
        var fixed = false, originBefore: CalibrationOrigin?, fieldBefore: Double?
        var last: [Vector3] = []
        for input in boatWithIron(in: southampton.reference, seconds: 600) {
            if !fixed, case .inertial(let s) = input, s.time.unixTime - Self.start >= 200 {
                originBefore = f.online?.origin
                fieldBefore = f.online?.field
                f.step(.localField(southampton))
                fixed = true
            }
            f.step(input)
            if case .magnetic(let s) = input, s.time.unixTime - Self.start > 590, let o = f.online { last.append(o.inForce.apply(s.field)) }
        }
        let o = try XCTUnwrap(f.online)
        let magnitude = last.map(\.length).reduce(0, +) / Double(max(last.count, 1))
        print(String(format: "fusion, a fit before the first fix at the fallback's field (%.2f µT), the fix's %.2f µT: judged by %.2f µT at the end, the calibrated field %.2f µT, quality %@",
                     fieldBefore ?? .nan, southampton.reference.norm, o.field ?? .nan, magnitude, o.quality(wmm: southampton.reference)))
        XCTAssertEqual(originBefore, .auto, "a fit in force before the fix")
        XCTAssertEqual(try XCTUnwrap(fieldBefore), Self.sydney.reference.norm, accuracy: 0.01)
        XCTAssertEqual(try XCTUnwrap(o.field), southampton.reference.norm, accuracy: 0.05)
        XCTAssertEqual(magnitude, southampton.reference.norm, accuracy: 0.5, "the calibrated field's magnitude")
        XCTAssertEqual(o.quality(wmm: southampton.reference), "good")
    }

    /// A vehicle that travels far meets an Earth's field of another magnitude: WMM's falls from 48.8 µT in the Solent to
    /// 38.6 µT off the Canaries, a passage of two weeks, and from 52 µT in Oslo to 43 µT in Seville by road. The magnitude
    /// the field is judged by must follow WMM's from fix to fix, in the proportion of the calibration's own to WMM's where
    /// it was set. Held at the start's, once 8 % off every sample was interference (norm) and nothing was learnt, and the
    /// filter's field disturbed. Here compressed into 20 minutes: the board turning at 6 °/s under a kept calibration
    /// scaled 10 % over WMM's (a chip's gain, or a fit before the first fix), the field falling by 20 % from 60 s to 1,140
    /// s, WMM's given at a fix every 10 s.
    func testTheFieldJudgedFollowsWMMsAsTheVehicleTravels() throws {
        var flagged = 0, disturbed = 0, counted = 0
        let (f, end) = try travelling(auto: .track, origin: .auto) { f, input, _ in
            guard case .magnetic = input else { return }
            counted += 1
            if f.online?.interference != nil { flagged += 1 }
            if f.filter.magnetic.disturbed { disturbed += 1 }
        }
        let o = try XCTUnwrap(f.online)
        let interference = Double(flagged) / Double(max(1, counted)), held = Double(disturbed) / Double(max(1, counted))
        print(String(format: "fusion, the field falling 20 %% as the vehicle travels (a calibration scaled 10 %% over WMM's): interference %.0f %% of the time from 60 s, the filter's field disturbed %.0f %%, the field judged by at the end %.2f µT (the field %.2f µT)",
                     100 * interference, 100 * held, o.field ?? .nan, end))
        XCTAssertEqual(interference, 0)
        XCTAssertLessThan(held, 0.01)
        XCTAssertEqual(try XCTUnwrap(o.field), end, accuracy: 0.01)
    }

    /// The same passage with online calibration off (`calibration.auto: off`): the reference the filter is given is the
    /// file's field, which does not follow WMM's; the filter's own reference must, or the field 20 % lower is disturbed.
    func testWithOnlineCalibrationOffTheFiltersFieldFollowsAsTheVehicleTravels() throws {
        var disturbed = 0, counted = 0, worst = 0.0
        _ = try travelling(auto: .off, origin: .manual) { f, input, heading in
            switch input {
            case .magnetic:
                counted += 1
                if f.filter.magnetic.disturbed { disturbed += 1 }
            case .inertial:
                if let a = f.emitted { worst = max(worst, abs(Compass.normalize(heading - a.magneticHeading + 180) - 180)) }
            default: break
            }
        }
        let held = Double(disturbed) / Double(max(1, counted))
        print(String(format: "fusion, online calibration off, the field falling 20 %% as the vehicle travels: the filter's field disturbed %.1f %% of the time from 60 s, the magnetic heading at most %.2f° off",
                     100 * held, worst))
        XCTAssertLessThan(held, 0.01)
        XCTAssertLessThan(worst, 1)
    }

    /// The passage of the two tests above: the board turning at 6 °/s for 20 minutes under a calibration of `origin` that
    /// scales the field 10 % over WMM's (a chip's gain, or a fit before the first fix), the field falling by 20 % from 60 s
    /// to 1,140 s, WMM's given at a fix every 10 s. `each` sees the fusion after each field and inertial sample from 60 s,
    /// with the board's heading then. Returns the fusion and the field's magnitude at the end.
    func travelling(auto: AutoCalibrationMode, origin: CalibrationOrigin,
                    each: (AttitudeFusion, FusionInput, Double) -> Void) throws -> (AttitudeFusion, Double) {
        let gain = 1.1, seconds = 1200.0
        @Sendable func strength(_ t: Double) -> Double { 1 - 0.2 * min(1, max(0, (t - 60) / 1080)) }
        var board = VirtualIMU(heading: { 6 * $0 })
        board.fieldNorm = Self.sydney.reference.norm * gain
        board.dip = Self.sydney.reference.dip
        let chip = try Orientation(axes: "+X-Y-Z")
        var f = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: true, auto: auto)
        var nextFix = 0.0
        for input in inputs(board, seconds: seconds) {
            switch input {
            case .calibration:
                f.step(.calibration(ActiveCalibration(chip: "qmc5883l", correction: .identity, origin: origin, field: board.fieldNorm)))
            case .magnetic(var m):
                let t = m.time.unixTime - Self.start
                if t >= nextFix {
                    f.step(.localField(LocalField(declination: Declination(Self.sydney.declination.value, .fix),
                                                  reference: MagneticFieldReference(norm: Self.sydney.reference.norm * strength(t), dip: board.dip))))
                    nextFix += 10
                }
                m.field = m.field * strength(t)
                f.step(.magnetic(m))
                if t >= 60 { each(f, input, board.heading(t)) }
            case .inertial(let i):
                f.step(input)
                let t = i.time.unixTime - Self.start
                if t >= 60 { each(f, input, board.heading(t)) }
            default: f.step(input)
            }
        }
        return (f, board.fieldNorm * strength(seconds))
    }

    /// A fix held as a jump (`PositionJumps`) is not believed for the WMM field, and teaches the car nothing either: a
    /// receiver whose position glitched has no reason to be believed for its course (and a spoofer gives both). A car
    /// going straight at 15 m/s on a heading of 100° magnetic, its fixes through the daemon's `FusionStage.take`; from 60 s
    /// to 69 s they are 2,200 km away with a course 30° off. The deviation learnt from driving took them as observations
    /// of a 30° deviation.
    func testAFixHeldAsAJumpTeachesTheCarNothing() throws {
        let chip = try Orientation(axes: "+X-Y-Z")
        var board = VirtualIMU(heading: { _ in 100 })
        board.fieldNorm = Self.sydney.reference.norm
        board.dip = Self.sydney.reference.dip
        var stage = FusionStage(AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: true, auto: .off, vehicle: .car))
        var field = WMMStage<LocalField?>.localFields(model: .wmm2025, fallback: Self.sydney)
        let course = 100 + Self.sydney.declination.value
        var lat = -33.9, lon = 151.2, nextFix = 1.0
        for input in inputs(board, seconds: 90) {
            _ = stage.step(input)
            guard case .inertial(let i) = input, i.time.unixTime - Self.start >= nextFix else { continue }
            let t = nextFix
            nextFix += 1
            lat += 15 * cos(course * .pi / 180) / 111_320
            lon += 15 * sin(course * .pi / 180) / (111_320 * cos(lat * .pi / 180))
            let jumped = t >= 60 && t < 70
            var fix = GPSFix(mode: .threeD, time: GPSTimestamp(unixTime: Self.start + t), latitude: jumped ? -20 : lat, longitude: jumped ? 135 : lon)
            fix.altHAE = 0
            fix.speed = 15
            fix.track = Compass.normalize(course + (jumped ? 30 : 0))
            stage.take(fix, field: &field, learnsFromDriving: true)
        }
        let driving = try XCTUnwrap(stage.fusion.driving)
        let seen = driving.observations.flatMap { $0 }.map(\.deviation)
        let worst = seen.map(abs).max() ?? .nan
        print(String(format: "fusion, a car's fixes held as a jump for 10 s with a course 30° off: %d epochs taken, the largest deviation observed %.2f°",
                     driving.taken, worst))
        XCTAssertGreaterThan(driving.taken, 10)
        XCTAssertLessThan(worst, 2, "an epoch held as a jump was taken")
    }

    /// A kept calibration brought to a place where WMM's field is another (a passage with nothing learnt on it, the board
    /// switched off at the other end): its field held where WMM's was 48.8 µT (the Solent), scaled 10 % over it, and the
    /// daemon starts where WMM's is 38.6 µT (off the Canaries). Tied to the first fix's, the field judged by stayed the
    /// Solent's and every sample was interference (norm); with WMM's where it held (`fieldWMM`, the kept file's
    /// `field_wmm`) it is scaled by WMM's ratio at the first fix. The board turning at 6 °/s for four minutes.
    func testAKeptCalibrationStartedFarFromWhereItHeldIsScaledByWMMsThere() throws {
        let kept = 48.8, here = 38.6, gain = 1.1
        let fix = LocalField(declination: Declination(0, .fix), reference: MagneticFieldReference(norm: here, dip: Self.sydney.reference.dip))
        let calibration = ActiveCalibration(chip: "qmc5883l", correction: .identity, origin: .auto, field: kept * gain, fieldWMM: kept)
        var flagged = 0, counted = 0, field = Double.nan
        try turningWithAKeptCalibration(scale: here * gain / Self.sydney.reference.norm, kept: calibration, local: fix) { f, _ in
            counted += 1
            if f.online?.interference != nil { flagged += 1 }
            field = f.online?.field ?? .nan
        }
        let interference = Double(flagged) / Double(max(1, counted))
        print(String(format: "fusion, a kept calibration (%.1f µT where WMM's was %.1f) started where WMM's is %.1f: the field judged by %.2f µT (the field %.2f), interference %.0f %% of the time from 60 s",
                     kept * gain, kept, here, field, here * gain, 100 * interference))
        XCTAssertEqual(field, here * gain, accuracy: 0.01)
        XCTAssertEqual(interference, 0)
    }

    /// A step of the hard iron on a level board turning at 6 °/s (a boat on calm water, a car on the flat: the field's
    /// directions a ring): 3, 5 or 8 µT along the chip's x from 100 s. The gyroscope's frame finds it and puts its hard
    /// iron in force at once; the step's fits must then end it. They fitted a sphere to the points, and a sphere through
    /// a ring has no one centre: every fit failed ("no plausible sphere fit"), and online calibration stayed learning,
    /// judging nothing and telling interference (step), for the 300 s after the step.
    func testAStepOfTheHardIronOnALevelTurningBoardEnds() throws {
        let lines = try [3.0, 5.0, 8.0].map { try stepOnATurningBoard($0, VirtualIMU(heading: { 6 * $0 })) }
        print("fusion, a step of the hard iron on a level board turning: " + lines.joined(separator: "; "))
    }

    /// The same steps on a boat on calm water as its sensors would tell it: rolling 2° and pitching 1° on the swell
    /// (periods of 6 and 8 s), the magnetometer's noise 0.3 µT on each axis (a QMC5883L's at its 2 G range is 2 mG RMS,
    /// its datasheet), the gyroscope's 0.03 °/s with 0.1 °/s off about each axis, the accelerometer's 0.02 m/s². Its
    /// points lie near a ring, not on one: a sphere the calibrator accepts through them may be wrong where the
    /// noise-free ring's was refused.
    func testAStepOfTheHardIronOnACalmBoatTurningEnds() throws {
        var board = VirtualIMU(heading: { 6 * $0 })
        board.roll = { 2 * sin(2 * .pi * $0 / 6) }
        board.pitch = { 1 * sin(2 * .pi * $0 / 8) }
        let lines = try [3.0, 5.0, 8.0].map { step in
            var random = RoadDriveRandom(seed: 7)
            func noise(_ sigma: Double) -> Vector3 { Vector3(random.gaussian(), random.gaussian(), random.gaussian()) * sigma }
            let bias = Vector3(0.1, -0.1, 0.1) * (.pi / 180)
            return try stepOnATurningBoard(step, board) { input in
                switch input {
                case .inertial(var s):
                    s.acceleration = s.acceleration + noise(0.02)
                    s.angularRate = s.angularRate.map { $0 + bias + noise(0.03 * .pi / 180) }
                    return .inertial(s)
                case .magnetic(var m):
                    m.field = m.field + noise(0.3)
                    return .magnetic(m)
                default: return input
                }
            }
        }
        print("fusion, a step of the hard iron on a calm boat turning: " + lines.joined(separator: "; "))
    }

    /// `step` µT along the chip's x from 100 s on `board` (given its field here: Sydney's), each input as `sensed`
    /// gives it, tracking online from a kept identity calibration: the step is found once, its learning ends within 180
    /// s, no interference is left and the hard iron in force is the step's within 0.3 µT. Returns the figures as printed.
    func stepOnATurningBoard(_ step: Double, _ board: VirtualIMU, sensed: (FusionInput) -> FusionInput = { $0 }) throws -> String {
        let chip = try Orientation(axes: "+X-Y-Z")
        var board = board
        board.fieldNorm = Self.sydney.reference.norm
        board.dip = Self.sydney.reference.dip
        var f = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: false, auto: .track)
        var endedAt: Double?
        for input in inputs(board, seconds: 400).map(sensed) {
            switch input {
            case .calibration: f.step(.calibration(ActiveCalibration(chip: "qmc5883l", correction: .identity, origin: .auto, field: board.fieldNorm)))
            case .magnetic(var m):
                let t = m.time.unixTime - Self.start
                if t > 100 { m.field = m.field + Vector3(step, 0, 0) }
                f.step(.magnetic(m))
                if t > 100, f.online?.steps == 1, f.online?.learning == false, endedAt == nil { endedAt = t }
            default: f.step(input)
            }
        }
        let o = try XCTUnwrap(f.online)
        XCTAssertEqual(o.steps, 1, "\(step) µT")
        XCTAssertLessThan(endedAt ?? .infinity, 280, "\(step) µT: the step's learning ends")
        XCTAssertNil(o.interference, "\(step) µT")
        XCTAssertLessThan((o.inForce.offset - Vector3(step, 0, 0)).length, 0.3, "\(step) µT")
        return String(format: "%.0f µT: %d step(s), learning ended %@, interference %@, hard iron %.2f µT off", step, o.steps,
                      endedAt.map { String(format: "%.0f s after it", $0 - 100) } ?? "never", o.interference?.rawValue ?? "none",
                      (o.inForce.offset - Vector3(step, 0, 0)).length)
    }

    /// A field that flaps about the disturbance threshold (10 % strong for half a second in every second, as beside
    /// a steel hull or a pump switching) is one episode of interference, told when it begins and when it ends, not
    /// twice a second: the CALIBRATION object and the journal follow the episodes.
    func testAFlappingFieldIsOneEpisodeToldOnceWhenItBeginsAndOnceWhenItEnds() throws {
        // Undisturbed for 20 s, flapping from 20 to 80 s, undisturbed again to 100 s.
        var (feed, f) = turningBoard(seconds: 100) { t in t > 20 && t < 80 && Int(t * 2) % 2 == 0 ? 1.1 : 1 }
        let told = Mutex<[(time: Double, interference: Interference?)]>([])
        f.onOnlineEvent = { change, state in
            if change == nil { told.withLock { $0.append((state.time.unixTime - Self.start, state.interference)) } }
        }
        for (_, input) in feed { f.step(input) }
        let events = told.withLock { $0 }
        print("fusion, a field flapping 10 % for 60 s: told \(events.map { String(format: "%.1f s %@", $0.time, $0.interference?.rawValue ?? "passed") })")
        XCTAssertEqual(events.count, 2, "one episode: begun and ended")
        XCTAssertEqual(try XCTUnwrap(events.first).interference, .norm)
        XCTAssertEqual(try XCTUnwrap(events.first).time, 20.5, accuracy: 0.6)
        XCTAssertNil(try XCTUnwrap(events.last).interference)
        XCTAssertEqual(try XCTUnwrap(events.last).time, 80, accuracy: 3)
    }

    /// The samples' clock stepped back by an hour in the middle of an episode of interference (a magnet near from 20 to
    /// 30 s, and again from 200 to 210 s; the step at 25 s), and back by another hour between the episodes (at 100 s).
    /// The episodes are timed on the fusion's own clock (`SampleClock`), not on the stamps: each lasts its 10 s,
    /// CALIBRATION's seconds go on counting through the step, and the journal, as the daemon keeps it (`Agent`), tells
    /// the second episode as it would without the steps. On the stamps, the first "ended after -3590.0 s", CALIBRATION
    /// said 0 s from the step on, and the journal's once-a-minute limit held back every line for the hour after the
    /// second step.
    func testAnEpisodeOfInterferenceIsTimedThroughAStepOfTheSamplesClock() throws {
        let turning = turningBoard(seconds: 300) { t in (t > 20 && t < 30) || (t > 200 && t < 210) ? 1.3 : 1 }
        var f = turning.fusion
        // The stamp of a sample taken `t` seconds after the start: an hour back from 25 s, two hours from 100 s.
        func stamped(_ t: Double) -> GPSTimestamp {
            GPSTimestamp(unixTime: Self.start + t - (t >= 100 ? 7200 : t >= 25 ? 3600 : 0))
        }
        let feed = turning.feed.map { t, input -> (t: Double, input: FusionInput) in
            switch input {
            case .magnetic(var s):
                s.time = stamped(t)
                return (t, .magnetic(s))
            case .inertial(var s):
                s.time = stamped(t)
                return (t, .inertial(s))
            default: return (t, input)
            }
        }
        let told = Mutex<[OnlineCalibrationState]>([])
        f.onOnlineEvent = { change, state in if change == nil, state.episode != nil { told.withLock { $0.append(state) } } }
        var secondsAt28: Double?
        for (t, input) in feed {
            f.step(input)
            // CALIBRATION's seconds of the episode going on, 8 s into it (3 s after the step).
            if case .magnetic(let s) = input, secondsAt28 == nil, t >= 28, let state = f.onlineState(at: s.time), state.ongoing != nil {
                secondsAt28 = state.interferenceSeconds
            }
        }
        let states = told.withLock { $0 }
        var journal = InterferenceJournal()
        let lines = states.compactMap { journal.line(for: $0.episode!) }
        let durations = states.compactMap { state -> Double? in
            if case .ended(let e) = state.episode! { return e.duration }
            return nil
        }
        print("fusion, the samples' clock stepped back by an hour 5 s into an episode and again between episodes: episodes lasted \(durations) s, "
              + "CALIBRATION's seconds 8 s into it \(secondsAt28 ?? .nan), journal \(lines)")
        XCTAssertEqual(states.count, 4, "two episodes, each begun and ended")
        XCTAssertEqual(durations.count, 2)
        for d in durations { XCTAssertEqual(d, 10, accuracy: 0.5, "each episode lasted 10 s") }
        XCTAssertEqual(try XCTUnwrap(secondsAt28), 8, accuracy: 0.5, "CALIBRATION counts on through the step")
        XCTAssertEqual(lines.count, 4, "the journal tells both episodes: \(lines)")
        XCTAssertEqual(lines.filter { $0.hasPrefix("magnetic interference ended after 10.0 s") }.count, 2, "\(lines)")
    }

    /// A disturbance that no hard iron explains (the field 30 % strong for 20 s: a steel box set down beside the board,
    /// whose induced field follows the Earth's) lasts past `stepTime` and is taken for a step of the hard iron; then it
    /// is gone. The step is undone once the field agrees with the calibration in force again for `stepTime`: the
    /// episode ends, the points taken during it are dropped, and online calibration judges the field again, so a
    /// second disturbance (200–205 s) is an episode of its own, and the calibration in force stays the one before.
    /// Before (2026-12-06) the step was never undone: the points the box bent sat in directions the field never took
    /// again, no fit explained them ("no plausible sphere fit"), and for the points' 30 minutes online calibration stayed
    /// "learning", judged no disturbance, and told the one episode as going on (CALIBRATION `interference: step`).
    func testADisturbanceNoHardIronExplainsIsAStepUndoneWhenItGoes() throws {
        var (feed, f) = turningBoard(seconds: 300) { t in (t > 20 && t < 40) || (t > 200 && t < 205) ? 1.3 : 1 }
        let told = Mutex<[InterferenceEpisodes.Event]>([])
        f.onOnlineEvent = { change, state in if change == nil, let e = state.episode { told.withLock { $0.append(e) } } }
        var learningAt100: Bool?
        for (t, input) in feed {
            f.step(input)
            if case .magnetic = input, learningAt100 == nil, t >= 100 { learningAt100 = f.online?.learning }
        }
        let events = told.withLock { $0 }
        print("fusion, the field 30 % strong for 20 s and 5 s: episodes \(events.map { String(format: "%@ %.1f s", "\($0)".hasPrefix("began") ? "began" : "ended", $0.time - Self.start) }), "
              + "learning at 100 s \(learningAt100.map { "\($0)" } ?? "-"), in force \(f.online?.inForce.offset ?? .zero)")
        XCTAssertEqual(events.count, 4, "two episodes, each begun and ended")
        if events.count >= 2 {
            XCTAssertEqual(events[0].time - Self.start, 20, accuracy: 0.5)
            XCTAssertLessThan(events[1].time - Self.start, 40 + 10 + 2 + 1, "ended within stepTime and the episode's settling of the field's return")
        }
        if events.count >= 3 { XCTAssertEqual(events[2].time - Self.start, 200, accuracy: 0.5, "the second disturbance is an episode of its own") }
        XCTAssertEqual(learningAt100, false, "learning ends with the step undone")
        XCTAssertEqual(f.online?.inForce, .identity, "the calibration before the step stays in force")
    }

    /// A saturated accelerometer (a knock beyond its range: the axis reads its full scale, not the motion) gives
    /// no "up": two seconds of it leave roll and pitch where they were.
    func testASaturatedAccelerometerDoesNotTiltTheAttitude() throws {
        var board = VirtualIMU(heading: { _ in 40 })
        board.fieldNorm = Self.sydney.reference.norm
        board.dip = Self.sydney.reference.dip
        var f = fusion()
        var last: Attitude?
        for input in inputs(board, seconds: 30) {
            guard case .inertial(var s) = input else { f.step(input); continue }
            let t = s.time.unixTime - Self.start
            if t > 20 && t < 22 {
                s.acceleration = Vector3(156.9, 0, 9.81)
                s.saturated = true
            }
            f.step(.inertial(s))
            if let a = f.emitted, t < 22.5 { last = a }
        }
        let a = try XCTUnwrap(last)
        print("fusion, 2 s of a saturated accelerometer: roll \(a.roll ?? .nan)°, pitch \(a.pitch ?? .nan)°")
        XCTAssertEqual(try XCTUnwrap(a.roll), 0, accuracy: 0.5)
        XCTAssertEqual(try XCTUnwrap(a.pitch), 0, accuracy: 0.5)
    }

    /// ATT's `held` at `times` (seconds from the start, 0 where ATT has none) on a board turning at 6 °/s for `seconds`,
    /// its field 30 % strong (a magnet brought near) over `magnet`, a calibration in force from the start (a tiny hard
    /// iron: the field's reference is WMM's from the start). Returns them and the filter's rejection time.
    func heldOnGyroscope(seconds: Double, magnet: ClosedRange<Double>, at times: [Double]) throws -> (held: [Double: Double], rejectionTime: Double) {
        var board = VirtualIMU(heading: { 6 * $0 })
        board.fieldNorm = Self.sydney.reference.norm
        board.dip = Self.sydney.reference.dip
        var f = AttitudeFusion(imuOrientation: try Orientation(axes: "+X-Y-Z"), magnetometerOrientation: try Orientation(axes: "+X-Y-Z"), trueNorth: true)
        var heldAt: [Double: Double] = [:]
        for input in inputs(board, seconds: seconds) {
            switch input {
            case .calibration: f.step(.calibration(ActiveCalibration(chip: "qmc5883l", correction: MagneticCalibration(offset: Vector3(0.01, 0, 0), matrix: .identity))))
            case .magnetic(var s):
                let t = s.time.unixTime - Self.start
                if t > magnet.lowerBound && t < magnet.upperBound { s.field = s.field * 1.3 }
                f.step(.magnetic(s))
            default: f.step(input)
            }
            if let a = f.emitted {
                let t = (a.time.unixTime - Self.start)
                if times.contains(where: { abs($0 - t) < 0.001 }) { heldAt[(t * 10).rounded() / 10] = a.held ?? 0 }
            }
        }
        print("fusion, a magnet near from \(magnet.lowerBound) to \(magnet.upperBound) s: ATT's held at \(heldAt.sorted { $0.key < $1.key }) "
              + "(rejection time \(f.filter.parameters.magMaxRejectionTime) s)")
        return (heldAt, f.filter.parameters.magMaxRejectionTime)
    }

    /// ATT's `held`: while the field is 30 % strong (a magnet brought near for 10 s), the heading rides on the
    /// gyroscope and ATT says for how long; once the field is back, it is absent again.
    func testATTSaysHowLongTheHeadingHasRiddenOnTheGyroscope() throws {
        let heldAt = try heldOnGyroscope(seconds: 60, magnet: 30...40, at: [25, 35, 39.5, 50]).held
        XCTAssertEqual(try XCTUnwrap(heldAt[25]), 0, "no held before the magnet")
        XCTAssertEqual(try XCTUnwrap(heldAt[35]), 5, accuracy: 0.3)
        XCTAssertEqual(try XCTUnwrap(heldAt[39.5]), 9.5, accuracy: 0.3)
        XCTAssertEqual(try XCTUnwrap(heldAt[50]), 0, "no held once the field is back")
    }

    /// ATT's `held` is the time the heading has ridden on the gyroscope *alone*: once the rejection time runs out
    /// (`magMaxRejectionTime`, 60 s) the heading follows the field again, at `magRejectionFactor` times its rate, and
    /// `held` stops growing, though the field is still judged disturbed (the episode's `seconds` in HEALTH go on).
    func testHeldStopsGrowingOnceTheHeadingFollowsTheFieldAgain() throws {
        let (heldAt, limit) = try heldOnGyroscope(seconds: 170, magnet: 30...150, at: [35, 80, 120, 149.5, 160])
        XCTAssertEqual(try XCTUnwrap(heldAt[35]), 5, accuracy: 0.3)
        XCTAssertEqual(try XCTUnwrap(heldAt[80]), 50, accuracy: 0.3)
        // At most the rejection time: 60.05 s, WMM's field given from the start paying it (59 s while it started spent
        // and the first seconds' budget was not all paid back by 30 s).
        let ridden = try XCTUnwrap(heldAt[120])
        XCTAssertGreaterThan(ridden, 55, "the heading rode on the gyroscope for the rejection time")
        XCTAssertLessThanOrEqual(ridden, limit + 0.1, "the heading follows the field again after the rejection time")
        XCTAssertEqual(try XCTUnwrap(heldAt[149.5]), ridden, "held stopped growing")
        XCTAssertEqual(try XCTUnwrap(heldAt[160]), 0, "no held once the field is back")
    }

    /// `vehicle: car` and `calibration.auto: track` from a cold start: a car behind a 25 µT hard iron pulls away
    /// at 1.5 m/s², brakes at 2 m/s² into two turns taken at 6 m/s, and drives on at 15 m/s. Its first straight
    /// fixes give the hard iron (the course as the heading), its fixes' speed takes its acceleration out of the
    /// accelerometer, and ATT's heading on the straights is right from the first minute; as `vehicle: none` it
    /// is not (only a turn teaches it there, and the tilt of each acceleration is taken for iron).
    func testACarFromAColdStartTakesItsHardIronFromItsFirstStraightFixes() throws {
        // The drive at 100 Hz: magnetic heading (°), speed (m/s), turn rate (°/s).
        var heading: [Double] = [], speed: [Double] = [], rate: [Double] = []
        var h = 40.0, v = 0.0
        func run(_ seconds: Double, to target: Double, turn: Double = 0) {
            for _ in 0..<Int(seconds * 100) {
                v += max(-0.02, min(0.015, target - v))
                h += turn / 100
                heading.append(h); speed.append(v); rate.append(turn)
            }
        }
        run(70, to: 15); run(5, to: 6); run(6, to: 6, turn: 15); run(70, to: 15); run(5, to: 6); run(6, to: 6, turn: -15); run(80, to: 15)
        let drive = (heading: heading, speed: speed, rate: rate)
        @Sendable func at(_ t: Double) -> Int { min(drive.heading.count - 1, max(0, Int((t * 100).rounded()))) }
        // Linear between the script's samples: the board's rate is the truth's derivative a millisecond either side.
        @Sendable func headingAt(_ t: Double) -> Double {
            let x = min(max(0, t * 100), Double(drive.heading.count - 1)), i = min(Int(x), drive.heading.count - 2)
            return drive.heading[i] + (drive.heading[i + 1] - drive.heading[i]) * (x - Double(i))
        }
        var board = VirtualIMU(heading: headingAt)
        board.acceleration = { t in
            let i = at(t), psi = drive.heading[i] * .pi / 180
            let along = (drive.speed[min(i + 1, drive.speed.count - 1)] - drive.speed[max(i - 1, 0)]) / 0.02
            return Vector3(sin(psi), cos(psi), 0) * along + Vector3(cos(psi), -sin(psi), 0) * (drive.speed[i] * drive.rate[i] * .pi / 180)
        }
        board.fieldNorm = Self.sydney.reference.norm
        board.dip = Self.sydney.reference.dip
        let declination = Self.sydney.declination.value, hard = Vector3(25, -10, 8)
        var feed: [FusionInput] = []
        var nextFix = 1.0
        for input in inputs(board, seconds: 240) {
            switch input {
            case .inertial(let s) where s.time.unixTime - Self.start >= nextFix:
                var f = GPSFix(mode: .threeD, time: GPSTimestamp(unixTime: Self.start + nextFix), latitude: -33.9, longitude: 151.2)
                f.track = Compass.normalize(drive.heading[at(nextFix)] + declination)
                f.speed = drive.speed[at(nextFix)]
                f.eps = 0.2
                feed.append(.fix(f))
                nextFix += 1
                feed.append(input)
            case .magnetic(var s):
                s.field = s.field + hard
                feed.append(.magnetic(s))
            default:
                feed.append(input)
            }
        }
        func straightError(_ vehicle: Vehicle) -> (rms: Double, changes: [CalibrationChange]) {
            let chip = try! Orientation(axes: "+X-Y-Z")
            var f = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: true, auto: .track, vehicle: vehicle)
            let changes = Mutex<[CalibrationChange]>([])
            f.onOnlineEvent = { change, _ in if let change { changes.withLock { $0.append(change) } } }
            var sum = 0.0, n = 0
            for input in feed {
                f.step(input)
                guard let a = f.emitted, let heading = a.heading else { continue }
                let t = a.time.unixTime - Self.start, i = at(t)
                guard t > 40, drive.speed[i] > 10, drive.rate[max(0, i - 300)...min(drive.rate.count - 1, i + 300)].allSatisfy({ $0 == 0 }) else { continue }
                var e = (heading - Compass.normalize(drive.heading[i] + declination)).truncatingRemainder(dividingBy: 360)
                if e > 180 { e -= 360 } else if e < -180 { e += 360 }
                sum += e * e
                n += 1
            }
            return ((sum / Double(max(n, 1))).squareRoot(), changes.withLock { $0 })
        }
        let car = straightError(.car), none = straightError(.none)
        print("fusion, a car from a cold start behind a 25 µT hard iron, pulling away and braking: heading RMS on the straights "
              + "after 40 s \(car.rms)° as a car (\(car.changes.count) changes, the first \(car.changes.first?.summary ?? "none")), "
              + "\(none.rms)° as none")
        XCTAssertTrue(try XCTUnwrap(car.changes.first).fromCourse)
        XCTAssertLessThan(car.rms, 1.5)
        XCTAssertGreaterThan(none.rms, 5)
    }

    /// `vehicle: car`: a car with its compass mounted 4° off its axis drives straight legs in eight directions,
    /// turning at speed; the fixes' course at speed teaches the deviation, and ATT's headings (and `deviation`)
    /// come right.
    func testACarLearnsItsDeviationFromDriving() throws {
        @Sendable func carHeading(_ t: Double) -> Double {
            let leg = Int(t / 35), into = t - Double(leg) * 35
            return Double(leg) * 45 + (into > 30 ? 45 * (into - 30) / 5 : 0)
        }
        var board = VirtualIMU(heading: { carHeading($0) + 4 })
        // Turning at 15 m/s pulls the car towards the turn's centre (the fixes' speed lets fusion take that out).
        board.acceleration = { t in
            let psi = carHeading(t) * .pi / 180, rate = (carHeading(t + 0.005) - carHeading(t - 0.005)) / 0.01 * .pi / 180
            return Vector3(cos(psi), -sin(psi), 0) * (15 * rate)
        }
        board.fieldNorm = Self.sydney.reference.norm
        board.dip = Self.sydney.reference.dip
        let declination = Self.sydney.declination.value
        var feed = inputs(board, seconds: 560)
        // A fix a second, 15 m/s along the car's true heading, slotted in by time.
        var withFixes: [FusionInput] = []
        var nextFix = 1.0
        for input in feed {
            if case .inertial(let s) = input, s.time.unixTime - Self.start >= nextFix {
                var f = GPSFix(mode: .threeD, time: GPSTimestamp(unixTime: Self.start + nextFix), latitude: -33.9, longitude: 151.2)
                f.track = Compass.normalize(carHeading(nextFix) + declination)
                f.speed = 15
                f.eps = 0.2
                withFixes.append(.fix(f))
                nextFix += 1
            }
            withFixes.append(input)
        }
        feed = withFixes
        func straightError(_ vehicle: Vehicle) -> (rms: Double, deviation: Double?) {
            let chip = try! Orientation(axes: "+X-Y-Z")
            var f = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: true, vehicle: vehicle)
            var sum = 0.0, n = 0
            var deviation: Double?
            for input in feed {
                f.step(input)
                guard let a = f.emitted else { continue }
                let t = a.time.unixTime - Self.start, into = t - Double(Int(t / 35)) * 35
                guard t > 280, into > 2, into < 29, let h = a.heading else { continue }
                var e = (h - Compass.normalize(carHeading(t) + declination)).truncatingRemainder(dividingBy: 360)
                if e > 180 { e -= 360 } else if e < -180 { e += 360 }
                sum += e * e
                n += 1
                deviation = a.deviation
                // HDG's heading is the sensor's: the deviation and it give the magnetic heading.
                if let d = a.deviation { XCTAssertEqual(Compass.normalize(a.compassHeading + d), a.magneticHeading, accuracy: 1e-6) }
            }
            return ((sum / Double(max(n, 1))).squareRoot(), deviation)
        }
        let car = straightError(.car), none = straightError(.none)
        print("fusion, a car with its compass 4° off: heading RMS on the straights of the second lap \(car.rms)° with vehicle car "
              + "(deviation \(car.deviation.map { String($0) } ?? "none")), \(none.rms)° without")
        XCTAssertLessThan(car.rms, 0.8)
        XCTAssertGreaterThan(none.rms, 3)
        XCTAssertEqual(try XCTUnwrap(car.deviation), -4, accuracy: 1)
        XCTAssertNil(none.deviation)

        // Kept across a restart: what the first run kept puts the deviation in force from the next run's first
        // attitude, before any fix; kept after another calibration, it is not used.
        let chip = try Orientation(axes: "+X-Y-Z")
        let keptRecords = Mutex<[DrivingDeviationRecord]>([])
        var first = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: true, vehicle: .car)
        first.onDrivingDeviation = { r in keptRecords.withLock { $0.append(r) } }
        for input in feed { first.step(input) }
        let records = keptRecords.withLock { $0 }
        let kept = try XCTUnwrap(records.last)
        XCTAssertGreaterThanOrEqual(records.count, 8, "a record at each new sector")
        XCTAssertLessThan(records.count, 40, "not one a fix")
        XCTAssertEqual(kept.sectors.filter { !$0.isEmpty }.count, 8, "the lap's eight headings")
        func firstDeviation(_ record: DrivingDeviationRecord, calibration: ActiveCalibration?) -> Double? {
            var f = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: true, vehicle: .car)
            f.step(.calibration(calibration))
            f.step(.drivingDeviation(try! DrivingDeviationRecord.decode(record.encoded(), source: "kept")))
            for input in feed.prefix(400) {
                switch input {
                case .fix, .calibration: continue
                default: f.step(input)
                }
                if let a = f.emitted { return a.deviation ?? .nan }
            }
            return nil
        }
        XCTAssertEqual(try XCTUnwrap(firstDeviation(kept, calibration: nil)), -4, accuracy: 1)
        let other = ActiveCalibration(chip: "qmc5883l", correction: MagneticCalibration(offset: Vector3(3, 0, 0), matrix: .identity))
        XCTAssertTrue(try XCTUnwrap(firstDeviation(kept, calibration: other)).isNaN, "kept under another calibration: not used")
    }

    /// The street's field bends the horizontal field without changing its magnitude or dip (a steel structure beside
    /// the road). Bent 20° at once for 6 s, neither the norm nor the dip sees it, but the field's heading in the
    /// gyroscope's frame does (`MagneticDisturbanceDetector.azimuthMoving`, since 2026-12-05): both the car and a plain
    /// filter ride the gyroscope through it (0.00°; before, the car erred by 1.90° at `tauMagOnLand`, a plain filter by
    /// 9.7°). Bent over 30 s, held 10 s and unbent over 30 s, slower than that test sees, a car's gyroscope still holds its
    /// heading better than the field does: as a land vehicle moving like one (`carLikeTiltRate`) the heading turns to
    /// the field at `tauMagOnLand` (60 s) and errs by 4.26°, where the filter's own 9 s lets 14.20° through; a board that
    /// tilts faster than a vehicle keeps the filter's own.
    func testACarsHeadingRidesTheStreetsFieldOnItsGyroscope() throws {
        var board = VirtualIMU(heading: { _ in 30 })
        board.fieldNorm = Self.sydney.reference.norm
        board.dip = Self.sydney.reference.dip
        let horizontal = board.earthField.y, bend = 20 * Double.pi / 180
        board.disturbance = { t in t >= 60 && t < 66 ? Vector3(horizontal * sin(bend), horizontal * (cos(bend) - 1), 0) : .zero }
        let chip = try Orientation(axes: "+X-Y-Z")
        func worstHeading(_ vehicle: Vehicle, _ board: VirtualIMU) -> (heading: Double, tau: Double) {
            var f = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: false, vehicle: vehicle)
            var worst = 0.0
            for input in inputs(board, seconds: 90) {
                f.step(input)
                if let a = f.emitted, a.time.unixTime - Self.start > 50 {
                    let h = a.magneticHeading
                    let truth = board.heading(a.time.unixTime - Self.start)
                    worst = max(worst, abs(remainder(h - truth, 360)))
                }
            }
            return (worst, f.filter.magnetometerTimeConstant)
        }
        // Bent at once, the field's heading in the gyroscope's frame moves faster than the gyroscope could err, and
        // both ride the gyroscope through it (`MagneticDisturbanceDetector.azimuthMoving`).
        let suddenPlain = worstHeading(.none, board), suddenCar = worstHeading(.car, board)
        // Bent over 30 s (0.67 °/s, below that test), held 10 s and unbent over 30 s: the time constant is what is left.
        board.disturbance = { t in
            let a = bend * max(0, min(1, (t - 60) / 30, (130 - t) / 30))
            return Vector3(horizontal * sin(a), horizontal * (cos(a) - 1), 0)
        }
        let plain = worstHeading(.none, board), car = worstHeading(.car, board)
        var turning = board
        turning.roll = { t in 20 * sin(t * 1.5) }
        let inHand = worstHeading(.car, turning)
        print(String(format: "the street's field bending the horizontal field 20° at once for 6 s: a car's heading errs %.2f°, a plain "
                     + "filter's %.2f°; over 30 s, held 10 s: a car's %.2f° (τ %.0f s), a plain filter's %.2f° (τ %.0f s); "
                     + "rolling ±20° at 1.5 rad/s: τ %.0f s",
                     suddenCar.heading, suddenPlain.heading, car.heading, car.tau, plain.heading, plain.tau, inHand.tau))
        XCTAssertLessThan(suddenPlain.heading, 1)
        XCTAssertLessThan(suddenCar.heading, 1)
        XCTAssertGreaterThan(plain.heading, 10)
        XCTAssertLessThan(car.heading, 6)
        XCTAssertEqual(car.tau, AttitudeFusion.tauMagOnLand)
        XCTAssertEqual(plain.tau, AttitudeFilterParameters().tauMag)
        XCTAssertEqual(inHand.tau, AttitudeFilterParameters().tauMag)
    }

    /// A car's heading turns to the field at `tauMagOnLand` (60 s) only while the gyroscope's bias was measured at a
    /// rest lately (`biasStaleTime`): the heading lags behind a bias the filter has not caught by about bias × τ, and a
    /// gyroscope warming in a car that does not stop (a motorway: its body's motion passes no rest test) drifts. Still
    /// for 30 s (the bias learnt, 0), then 15 minutes on a motorway without a stop, the car pitching on its springs
    /// (±0.4° at 1.3 Hz: a 25 Hz shake the rest test's low-pass takes out, and a rest is taken), in slow bends, the gyroscope's bias about the vertical warming from 0 to 0.1 °/s over the first five
    /// minutes. Judged over the last five minutes: the heading's mean error, against 0.1 °/s × 60 s = 6° had it kept 60 s.
    /// Measured (2026-12-04): 3.00° (τ 30 s after 300 s without a rest; 60 s before); 6.00° with 60 s throughout.
    func testAGyroscopeWarmingOnAMotorwayHasTheFieldTakeItsHeadingSooner() throws {
        let drive = 30.0, warming = 300.0, bias = 0.1
        var board = VirtualIMU(heading: { t in 30 + 15 * sin(2 * Double.pi * max(t - drive, 0) / 180) })
        // The car pitching on its springs (±0.4° at 1.3 Hz): too slow for the rest test's low-pass to take out.
        board.pitch = { t in t >= drive ? 0.4 * sin(2 * Double.pi * 1.3 * t) : 0 }
        board.fieldNorm = Self.sydney.reference.norm
        board.dip = Self.sydney.reference.dip
        let chip = try Orientation(axes: "+X-Y-Z")
        // The bias about the vertical (the board's z up), added to what the chip reads.
        func warmed(_ t: Double) -> Vector3 {
            let b = bias * min(max(t - drive, 0) / warming, 1) * .pi / 180
            return chip.matrix.transposed * Vector3(0, 0, -b)
        }
        var f = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: false, vehicle: .car)
        var sum = 0.0, n = 0.0, tau: [Double] = []
        for input in inputs(board, seconds: 930) {
            var input = input
            if case .inertial(var s) = input, let w = s.angularRate {
                s.angularRate = w + warmed(s.time.unixTime - Self.start)
                input = .inertial(s)
            }
            f.step(input)
            guard case .inertial(let s) = input else { continue }
            let t = s.time.unixTime - Self.start
            if abs(t - 200) < 0.005 || abs(t - 900) < 0.005 { tau.append(f.filter.magnetometerTimeConstant) }
            if t > 630, let a = f.emitted {
                sum += abs(remainder(a.magneticHeading - board.heading(t), 360))
                n += 1
            }
        }
        let mean = sum / max(n, 1)
        print(String(format: "a car warming its gyroscope by 0.1 °/s on a motorway without a stop: the heading's mean error %.2f° "
                     + "over the last five minutes (60 s throughout: about 6°); τ %@ s at 200 s and 900 s", mean, "\(tau)"))
        XCTAssertEqual(tau, [AttitudeFusion.tauMagOnLand, AttitudeFusion.tauMagOnLandBiasStale])
        XCTAssertLessThan(mean, 4.0, "the heading's mean error over the last five minutes")
    }

    /// A steady curve is no rest. A car on a long bend turning at 1 °/s, on an IMU quiet enough (a smooth road, a
    /// sensor that filters what it reports) that the gyroscope and accelerometer hold within the rest test's bounds,
    /// would have its turn taken for gyroscope bias: the heading stops turning with the car and follows only the
    /// magnetometer, at a land vehicle's 60 s. A land vehicle is not at rest while GNSS says it moves, nor, without
    /// GNSS, while its rate departs from the bias already learnt by more than that bias's uncertainty allows
    /// (`AttitudeFilter.restMustMatchBias`). Still for 30 s (the bias learnt), then 60 s round the bend at 20 m/s.
    func testASteadyBendIsNoRest() throws {
        // Measured (2026-12-04): 0.98° and 0.06°, the bias learnt 0.005 and 0.004 °/s (1.46° while a car's heading
        // turned to the field at 30 s; 33.1° off after a minute without the guard). Bounds at about 1.5 times.
        try assertSteadyTurn("a car on a 1 °/s bend", .car, speed: 20, heading: (1.5, 0.1), bias: 0.0075)
    }

    /// A boat's steady turn is no rest either: a motor boat on flat water (a lake, a canal, a marina) holding a
    /// 1 °/s turn at 5 m/s, its IMU as quiet as the car's above. A boat's rest must agree with the bias learnt too
    /// (`AttitudeFilter.restMustMatchBias`, on for every vehicle); a board in the hand keeps taking every rest.
    func testABoatsSteadyTurnIsNoRest() throws {
        // Measured (2026-12-04): 0.84° either way, the bias learnt 0.005 °/s; 8.43° and 0.999 °/s (the turn's whole
        // rate) while only a land vehicle's rest had to agree with the bias. Bounds at about 1.5 times.
        try assertSteadyTurn("a boat in a 1 °/s turn on flat water", .boat, speed: 5, heading: (1.3, 1.3), bias: 0.0075)
    }

    /// `steadyBend` without fixes and with them: the worst heading error below `heading` (without, with), the bias
    /// learnt below `bias` (°/s) either way.
    func assertSteadyTurn(_ label: String, _ vehicle: Vehicle, speed: Double, heading: (Double, Double), bias: Double,
                          file: StaticString = #filePath, line: UInt = #line) throws {
        let alone = try steadyBend(vehicle, speed: speed, fixes: false), withFixes = try steadyBend(vehicle, speed: speed, fixes: true)
        print(String(format: "%@, its IMU quiet: heading errs %.2f° without fixes (bias learnt %.3f °/s), %.2f° with them (%.3f °/s); "
                     + "the true bias 0", label, alone.heading, alone.bias, withFixes.heading, withFixes.bias))
        XCTAssertLessThan(alone.heading, heading.0, "\(label): without fixes", file: file, line: line)
        XCTAssertLessThan(withFixes.heading, heading.1, "\(label): with fixes", file: file, line: line)
        XCTAssertLessThan(alone.bias, bias, "\(label): the bias learnt without fixes", file: file, line: line)
        XCTAssertLessThan(withFixes.bias, bias, "\(label): the bias learnt with fixes", file: file, line: line)
    }

    /// Still for 30 s (the bias learnt), then 60 s round a bend at 1 °/s and `speed` m/s, on a quiet IMU: the worst
    /// magnetic heading error after 40 s and the gyroscope bias learnt at the end (°/s; the true bias is 0).
    func steadyBend(_ vehicle: Vehicle, speed: Double, fixes: Bool) throws -> (heading: Double, bias: Double) {
        let rate = 1.0
        var board = VirtualIMU(heading: { t in 10 + rate * max(0, t - 30) })
        board.acceleration = { t in
            guard t >= 30 else { return .zero }
            let psi = (10 + rate * (t - 30)) * Double.pi / 180
            return Vector3(cos(psi), -sin(psi), 0) * (speed * rate * Double.pi / 180)
        }
        board.fieldNorm = Self.sydney.reference.norm
        board.dip = Self.sydney.reference.dip
        let chip = try Orientation(axes: "+X-Y-Z")
        var f = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: false, vehicle: vehicle)
        var worst = 0.0, nextFix = 1.0
        for input in inputs(board, seconds: 90) {
            if fixes, case .inertial(let s) = input, s.time.unixTime - Self.start >= nextFix {
                var x = GPSFix(mode: .threeD, time: GPSTimestamp(unixTime: Self.start + nextFix), latitude: -33.9, longitude: 151.2)
                x.track = Compass.normalize(board.heading(nextFix) + Self.sydney.declination.value)
                x.speed = nextFix >= 30 ? speed : 0
                f.step(.fix(x))
                nextFix += 1
            }
            f.step(input)
            if let a = f.emitted, a.time.unixTime - Self.start > 40 {
                worst = max(worst, abs(remainder(a.magneticHeading - board.heading(a.time.unixTime - Self.start), 360)))
            }
        }
        return (worst, f.filter.gyroBias.length * 180 / .pi)
    }

    /// A car without GNSS speed cannot take its own acceleration out of the accelerometer: braking at 1.5 m/s² for
    /// 8 s tilts a 3 s filter's "up" by most of 8.7°. As a car (`vehicle: car`, no fix), the accelerometer is taken
    /// at `tauAccWithoutSpeed` (the gyroscope holds the tilt), so the pitch errs by a fraction of that; with fixes at
    /// `tauAccWithSpeed` (the speed's change takes out most of the acceleration, a second late); on a board that tilts
    /// faster than a vehicle does, the filter's own time constant is kept. (In the filter's
    /// first `tauAccWithoutSpeed` seconds its "up" is the mean of what it read, as VQF starts: pulling away at 10 s
    /// costs 3.9° then, against 9.0°.)
    func testACarWithoutGNSSSpeedRidesItsTiltOnTheGyroscope() throws {
        var board = VirtualIMU(heading: { _ in 30 })
        let psi = 30 * Double.pi / 180
        // Still, pulling away at 10 s, cruising at 12 m/s, braking to a stop at 80 s.
        board.acceleration = { t in Vector3(sin(psi), cos(psi), 0) * (t >= 10 && t < 18 ? 1.5 : t >= 80 && t < 88 ? -1.5 : 0) }
        board.fieldNorm = Self.sydney.reference.norm
        board.dip = Self.sydney.reference.dip
        let chip = try Orientation(axes: "+X-Y-Z")
        func worstPitch(_ vehicle: Vehicle, fixes: Bool, _ board: VirtualIMU) -> (pitch: Double, tau: Double) {
            var f = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: true, vehicle: vehicle)
            var worst = 0.0, nextFix = 1.0
            for input in inputs(board, seconds: 100) {
                if fixes, case .inertial(let s) = input, s.time.unixTime - Self.start >= nextFix {
                    var x = GPSFix(mode: .threeD, time: GPSTimestamp(unixTime: Self.start + nextFix), latitude: -33.9, longitude: 151.2)
                    x.track = 30
                    x.speed = (min(max(0, nextFix - 10), 8) - min(max(0, nextFix - 80), 8)) * 1.5
                    f.step(.fix(x))
                    nextFix += 1
                }
                f.step(input)
                if let a = f.emitted, a.time.unixTime - Self.start > 80, let pitch = a.pitch {
                    worst = max(worst, abs(pitch - board.pitch(a.time.unixTime - Self.start)))
                }
            }
            return (worst, f.filter.accelerometerTimeConstant)
        }
        let plain = worstPitch(.none, fixes: false, board), car = worstPitch(.car, fixes: false, board)
        let withFixes = worstPitch(.car, fixes: true, board)
        var turning = board
        turning.roll = { t in 20 * sin(t * 1.5) }
        let inHand = worstPitch(.car, fixes: false, turning)
        print(String(format: "a car braking at 1.5 m/s² without GNSS: largest pitch error %.2f° (τ %.0f s) against %.2f° for a "
                     + "plain filter (τ %.0f s); with fixes %.2f° (τ %.0f s); rolling ±20° at 1.5 rad/s: τ %.0f s",
                     car.pitch, car.tau, plain.pitch, plain.tau, withFixes.pitch, withFixes.tau, inHand.tau))
        XCTAssertGreaterThan(plain.pitch, 5)
        XCTAssertLessThan(car.pitch, plain.pitch / 4)
        XCTAssertEqual(car.tau, AttitudeFusion.tauAccWithoutSpeed)
        XCTAssertEqual(withFixes.tau, AttitudeFusion.tauAccWithSpeed)
        // Measured (2026-12-05): with fixes 0.22° at 20 s; 1.92° at the filter's own 3 s, worse than without fixes.
        XCTAssertLessThan(withFixes.pitch, 0.33, "with fixes, the speed's change taken out")
        XCTAssertEqual(inHand.tau, AttitudeFilterParameters().tauAcc)
    }

}
