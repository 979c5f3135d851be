@testable import BearingCalibration
@testable import BearingOnlineCalibration
import BearingAttitude
import BearingCompass
import BearingModel
import BearingSensors
import BearingSimulator
import Synchronization
import XCTest

/// The issue's trip, in virtual time on the register models and through the fusion stage the daemon runs: a
/// boat at 5 kn through the water in a 1 kn cross current, rolling ±10° in waves, its compass 2° off the boat's
/// axis behind a 20 µT hard iron and 5 % soft iron, the hard iron jumping by 10 µT at minute 15. The virtual
/// board's motion and field are sensed by an LSM6DSOX and a QMC5883L at register level, read by their drivers
/// (100 Hz and 20 Hz), and fused by the daemon's own stage (`FusionStage`, fed one
/// sample at a time), configured as a boat's (`vehicle: boat`, 2026-12-04; the figures are those of `vehicle: none` to
/// the hundredth). Online calibration (`track`) learns the iron; a swing at the start (two slow circles) against
/// GNSS gives the deviation curve and the current.
final class BoatTripTests: XCTestCase {
    static let start = 1_790_000_000.0
    static let solent = LocalField.wmm(.wmm2025, latitude: 50.8, longitude: -1.3, heightKm: 0, year: 2026.9, source: .fallback)
    static let misalignment = 2.0
    static let waterSpeed = 2.572, current = (east: 0.514, north: 0.0)

    /// The boat's magnetic heading: 60 s straight, three slow circles at 2 °/s (online calibration learns in the
    /// first, the swing is taken once it has), then 60 s legs with 90° turns at 3 °/s between them.
    static let circlesEnd = 600.0
    static func boatHeading(_ t: Double) -> Double {
        if t < 60 { return 30 }
        if t < circlesEnd { return 30 + 2 * (t - 60) }
        let into = (t - circlesEnd).truncatingRemainder(dividingBy: 90), leg = Double(Int((t - circlesEnd) / 90))
        return 30 + 90 * leg + (into > 60 ? 3 * (into - 60) : 0)
    }

    func testThirtyMinutesInACrossCurrentWithAStepOfTheHardIron() throws {
        let decl = Self.solent.declination.value
        var board = VirtualIMU(heading: { Self.boatHeading($0) + Self.misalignment })
        board.roll = { 10 * sin(2 * .pi * $0 / 6) }
        board.pitch = { 3 * sin(2 * .pi * $0 / 8) }
        board.fieldNorm = Self.solent.reference.norm
        board.dip = Self.solent.reference.dip
        let chip = try Orientation(axes: "+X-Y-Z")
        func toChip(_ flu: Vector3) -> Vector3 { chip.matrix.transposed * Vector3(flu.x, -flu.y, -flu.z) }
        let soft = Matrix3([1.05, 0.02, 0], [0.02, 0.96, 0.01], [0, 0.01, 1.0])
        func hard(_ t: Double) -> Vector3 { Vector3(20, -12, 7) + (t >= 900 ? Vector3(10, 0, 0) : .zero) }
        var random = SplitMix64(seed: 11)
        func noise(_ s: Double) -> Double { random.uniform(-s, s) * 1.7 }

        // The chips at register level, sensing the board at the virtual time `t`, read by their drivers.
        let bus = SimulatedI2CBus()
        var t = 0.0
        ChipModels.attachInertial(chip: "lsm6dsox", to: bus) {
            let s = board.sensed(at: t)
            return Motion(specificForce: toChip(s.specificForce), angularRate: toChip(s.angularRate))
        }
        ChipModels.attach(chip: "qmc5883l", to: bus) { soft * toChip(board.sensed(at: t).field) + hard(t) + Vector3(noise(0.2), noise(0.2), noise(0.2)) }
        let imu = LSM6DSx(bus: bus, address: 0x6A), magnetometer = QMC5883L(bus: bus, address: 0x0D)
        imu.sleep = { _ in }
        magnetometer.sleep = { _ in }
        try imu.identify()
        _ = try imu.configure(InertialSettings())
        try magnetometer.identify()
        _ = try magnetometer.configure(MagnetometerSettings())

        var fusion = AttitudeFusion(imuOrientation: chip, magnetometerOrientation: chip, trueNorth: true, auto: .track, vehicle: .boat)
        let changes = Mutex<[Double]>([])
        let summaries = Mutex<[String]>([])
        let lastState = Mutex<OnlineCalibrationState?>(nil)
        fusion.onOnlineEvent = { change, state in
            if let change {
                // The swing starts again after a change that turns the heading, as `bearing attitude`'s does
                // (`OfflineAttitude`): a refinement (the hard iron moved by less than 1 % of the field) keeps it.
                if change.turnsTheHeading { changes.withLock { $0.append(state.time.unixTime - Self.start) } }
                summaries.withLock { $0.append(String(format: "%.0f s: ", state.time.unixTime - Self.start) + "\(change.calibration.offset): " + change.summary) }
            }
            lastState.withLock { $0 = state }
        }
        var stage = FusionStage(fusion)
        stage.start(calibration: nil, localField: Self.solent)
        var latest: Attitude?
        var swing: [SwingSample] = []
        var truthObservations: [(compass: Double, deviation: Double)] = []
        var turned = 0.0, lastTime: Double?
        var errors: [(t: Double, error: Double, compass: Double)] = []
        for k in 0...(1800 * 100) {
            let tk = Double(k) / 100
            t = tk
            let r = try imu.read()
            latest = nil
            latest = stage.step(.inertial(InertialSample(time: GPSTimestamp(unixTime: Self.start + tk), device: "imu", chip: "lsm6dsx",
                                         acceleration: r.acceleration, angularRate: r.angularRate, temperature: r.temperature)))
            if let a = latest, let q = a.quaternion, let rate = a.angularRate {
                if let last = lastTime { turned -= q.rotate(rate).z * (tk - last) }
                lastTime = tk
            }
            if k % 5 == 0 {
                t = tk + 0.003
                let m = try magnetometer.read()
                _ = stage.step(.magnetic(MagneticSample(time: GPSTimestamp(unixTime: Self.start + t), device: "mag", chip: "qmc5883l",
                                             field: m.field, overflow: m.overflow)))
                t = tk
            }
            guard k % 100 == 0, let a = latest, let h = a.heading else { continue }
            // True heading of the boat, and the compass's error against it.
            let boatTrue = Compass.normalize(Self.boatHeading(t) + decl)
            var e = (h - boatTrue).truncatingRemainder(dividingBy: 360)
            if e > 180 { e -= 360 } else if e < -180 { e += 360 }
            errors.append((t, e, a.compassHeading))
            // The swing's GNSS epochs (ground velocity = water speed along the boat's true heading + the current), from
            // 60 s after online calibration's latest change (the heading settled) to the end of the circles.
            if let settledFrom = changes.withLock({ $0.last }).map({ $0 + 60 }), t >= settledFrom, t < Self.circlesEnd {
                if let first = swing.first, first.time < (changes.withLock { $0.last } ?? 0) { swing = []; truthObservations = [] }
                let r = boatTrue * .pi / 180
                let ve = Self.waterSpeed * sin(r) + Self.current.east + noise(0.03), vn = Self.waterSpeed * cos(r) + Self.current.north + noise(0.03)
                swing.append(SwingSample(time: t, gyroHeading: turned, compassHeading: a.compassHeading,
                                         speed: (ve * ve + vn * vn).squareRoot(), track: Compass.normalize(atan2(ve, vn) * 180 / .pi), eph: 2, eps: 0.1))
                truthObservations.append((a.compassHeading, SwingSolver.wrap180(Self.boatHeading(t) - a.compassHeading)))
            }
        }
        // The swing: the curve against the boat's own error as it was over the swing, and the current.
        let result = try SwingSolver.solve(swing, variation: decl)
        let truth = try XCTUnwrap(SwingSolver.fitCurve(truthObservations)).coefficients
        let truthCurve = DeviationCurve(coefficients: truth)
        let curveError = (0..<360).map { abs(result.curve.deviation(atCompassHeading: Double($0)) - truthCurve.deviation(atCompassHeading: Double($0))) }.max()!
        let ignored = try SwingSolver.solve(swing, variation: decl, limits: { var l = SwingLimits(); l.maximumVelocityResidual = 10; l.maximumDeviationResidual = 10; return l }(), solveCurrent: false)
        let ignoredError = (0..<360).map { abs(ignored.curve.deviation(atCompassHeading: Double($0)) - truthCurve.deviation(atCompassHeading: Double($0))) }.max()!
        // Heading with the swing's curve applied from the end of the swing, outside the 3 minutes after the jump.
        let scored = errors.filter { $0.t >= Self.circlesEnd && !($0.t >= 900 && $0.t < 1080) }
        let corrected = scored.map { $0.error + result.curve.deviation(atCompassHeading: $0.compass) }
        let rms = (corrected.reduce(0) { $0 + $1 * $1 } / Double(corrected.count)).squareRoot()
        let raw = (scored.reduce(0) { $0 + $1.error * $1.error } / Double(scored.count)).squareRoot()
        let afterJump = errors.filter { $0.t >= 900 && $0.t < 1080 }.map { $0.error + result.curve.deviation(atCompassHeading: $0.compass) }
        let jumpRMS = (afterJump.reduce(0) { $0 + $1 * $1 } / Double(max(afterJump.count, 1))).squareRoot()
        func windowRMS(_ a: Double, _ b: Double) -> String {
            let w = errors.filter { $0.t >= a && $0.t < b }.map { $0.error + result.curve.deviation(atCompassHeading: $0.compass) }
            return String(format: "%.2f", (w.reduce(0) { $0 + $1 * $1 } / Double(max(w.count, 1))).squareRoot())
        }
        let windows = stride(from: Self.circlesEnd, to: 1800, by: 120).map { "\(Int($0))–\(Int($0) + 120) s \(windowRMS($0, $0 + 120))°" }.joined(separator: ", ")
        let state = try XCTUnwrap(lastState.withLock { $0 })
        print("""
            boat trip, 30 min at 5 kn in a 1 kn cross current, rolling ±10°, compass 2° off, 20 µT hard iron (+10 µT at 15 min), 5 % soft iron:
              swing: curve within \(curveError)° of the boat's own error (A..E \(result.curve.coefficients.map { String(format: "%.2f", $0) }), truth \(truth.map { String(format: "%.2f", $0) })); current (\(String(format: "%.3f", result.current.east)), \(String(format: "%.3f", result.current.north))) m/s for (0.514, 0)
              current ignored: curve within \(ignoredError)° (velocity misfit \(String(format: "%.2f", ignored.velocityResidual)) vs \(String(format: "%.2f", result.velocityResidual)) m/s)
              heading RMS from the swing's end, outside the 3 min after the jump: \(rms)° with the curve, \(raw)° without; in the 3 min after the jump \(jumpRMS)°
              by window: \(windows)
              online calibration: changes at \(changes.withLock { $0 }.map { Int($0) }) s, \(state.steps) step(s), origin \(state.origin), quality \(state.quality); swing from \(swing.first.map { Int($0.time) } ?? -1) s, \(swing.count) epochs
            """ + summaries.withLock { $0 }.map { "\n    " + $0 }.joined())
        XCTAssertLessThanOrEqual(curveError, 0.3)
        XCTAssertEqual(result.current.east, Self.current.east, accuracy: 0.1)
        XCTAssertEqual(result.current.north, Self.current.north, accuracy: 0.1)
        XCTAssertGreaterThan(ignoredError, curveError)
        // The issue's bar (0.24° measured; bound at 1.5 times). It was 0.10° while the first field sample, taken before
        // any accelerometer sample, had the identity's "up": that point's dip kept a refinement at 358 s from being
        // taken. The refinement (0.1 µT) comes in the middle of the swing, which keeps its epochs across a change that
        // does not turn the heading, so the curve mixes the headings before and after it.
        XCTAssertLessThanOrEqual(rms, 0.36)
        XCTAssertLessThan(rms, raw, "the swing's curve must improve the heading")
        XCTAssertEqual(state.steps, 1)
        // The step (a magnet, a new battery): its new hard iron in force within 30 s, and the heading right in the
        // 3 minutes after it: 0.79° measured since the field's heading in the gyroscope's frame is judged too (the jump
        // turns it there at once, and the heading rides the gyroscope until the step is in force); 2.0° before, 13.6°
        // when only the magnitude told a step. The issue's goal is 3°; the bound is 1.5 times the figure.
        XCTAssertTrue(changes.withLock { $0 }.contains { $0 > 900 && $0 <= 930 }, "no change within 30 s of the step")
        XCTAssertLessThanOrEqual(jumpRMS, 1.2, "heading RMS in the 3 minutes after the step")
    }
}
