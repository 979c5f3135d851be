@testable import BearingAttitude
import BearingModel
import XCTest

/// The hard iron from the gyroscope's attitude, on orientations drawn here (rotation matrices built from angles,
/// not the filter's quaternions) with a known field, hard iron and noise.
final class GyroAidedHardIronTests: XCTestCase {
    /// A rotation world → sensor from yaw, pitch, roll (degrees), as a matrix built axis by axis.
    static func worldToSensor(yaw: Double, pitch: Double, roll: Double) -> Matrix3 {
        let (y, p, r) = (yaw * .pi / 180, pitch * .pi / 180, roll * .pi / 180)
        let rz = Matrix3([cos(y), sin(y), 0], [-sin(y), cos(y), 0], [0, 0, 1])
        let ry = Matrix3([cos(p), 0, -sin(p)], [0, 1, 0], [sin(p), 0, cos(p)])
        let rx = Matrix3([1, 0, 0], [0, cos(r), sin(r)], [0, -sin(r), cos(r)])
        return rx * ry * rz
    }

    struct Noise {
        var state: UInt64
        mutating func next() -> Double {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Double(state >> 11) / Double(1 << 53) * 2 - 1
        }
    }

    /// 20 s at 10 Hz of a board turning about all its axes (or only about the vertical), the Earth field `b`
    /// fixed in the world, a hard iron `o`: raw = R·b + o + noise.
    func samples(_ o: Vector3, yawOnly: Bool = false, noise amplitude: Double = 0.3) -> GyroAidedHardIron {
        var g = GyroAidedHardIron(window: 20)
        var noise = Noise(state: 42)
        let b = Vector3(0, 19.6, -44.6)
        for k in 0..<200 {
            let t = Double(k) / 10
            let r = Self.worldToSensor(yaw: 18 * t, pitch: yawOnly ? 0 : 35 * sin(t / 2), roll: yawOnly ? 0 : 50 * sin(t / 3.1))
            let raw = r * b + o + Vector3(noise.next(), noise.next(), noise.next()) * amplitude
            g.add(raw, east: r * Vector3(1, 0, 0), up: r * Vector3(0, 0, 1), time: t)
        }
        return g
    }

    func testAHardIronThreeTimesTheFieldIsFoundFromTwentySecondsOfTurning() throws {
        let o = Vector3(90, -100, 60)
        let s = try XCTUnwrap(samples(o).solve())
        print("gyro-aided hard iron: \(s.offset) for \(o), field \(s.field.length) µT, residual \(s.residual), spread \(s.spread)")
        XCTAssertLessThan((s.offset - o).length, 0.3)
        XCTAssertEqual(s.field.length, Vector3(0, 19.6, -44.6).length, accuracy: 0.3)
        XCTAssertLessThan(s.residual, 0.02)
    }

    func testTurningAboutTheVerticalAloneIsNotEnough() {
        let g = samples(Vector3(20, -10, 5), yawOnly: true)
        XCTAssertNil(g.solve(), "the vertical hard iron cannot be told from the vertical field")
        // Without a least spread asked for, the system is singular, or its spread nil.
        XCTAssertLessThan(g.solve(minimumSpread: 0)?.spread ?? 0, 0.01)
    }

    /// A car at a corner: 5 s straight, 90° about the vertical in 10 s, 5 s straight, tilted 1° and 2° by the road;
    /// `yaw` from `from` through `turn` degrees.
    func corner(_ o: Vector3, from: Double = 30, turn: Double = 90) -> GyroAidedHardIron {
        var g = GyroAidedHardIron(window: 20)
        var noise = Noise(state: 7)
        let b = Vector3(0, 19.6, -44.6)
        for k in 0..<200 {
            let t = Double(k) / 10
            let r = Self.worldToSensor(yaw: from + turn * min(1, max(0, t - 5) / 10), pitch: 1, roll: -2)
            let raw = r * b + o + Vector3(noise.next(), noise.next(), noise.next()) * 0.3
            g.add(raw, east: r * Vector3(1, 0, 0), up: r * Vector3(0, 0, 1), time: t)
        }
        return g
    }

    /// About the vertical alone the vertical hard iron cannot be told from the vertical field; given the field's
    /// vertical component (WMM's), one corner gives the whole hard iron and the horizontal field.
    func testACornerGivesTheHardIronWhenTheVerticalFieldIsGiven() throws {
        let o = Vector3(25, -30, 12)
        let g = corner(o)
        XCTAssertNil(g.solve(), "the full solve: no spread about one axis")
        let s = try XCTUnwrap(g.solveLevel(vertical: -44.6))
        print("gyro-aided hard iron at a corner: \(s.offset) for \(o), field \(s.field), residual \(s.residual), spread \(s.spread)")
        XCTAssertLessThan((s.offset - o).length, 0.3)
        XCTAssertEqual(s.field.x, 0, accuracy: 0.3)
        XCTAssertEqual(s.field.y, 19.6, accuracy: 0.3)
        XCTAssertLessThan(s.residual, 0.02)
        // A 30° bend: its spread, 1 − (sin²φ + (1 − cos φ)²)/φ² ≈ 0.02 over the arc alone, is too little.
        XCTAssertNil(corner(o, turn: 30).solveLevel(vertical: -44.6))
    }

    /// A vertical field 4 µT off (WMM's against the car's own, or a soft iron's scale) moves the vertical hard iron
    /// by as much, and the horizontal one hardly (by what the road's 2° of tilt carries over).
    func testAWrongVerticalFieldMovesTheVerticalHardIron() throws {
        let o = Vector3(25, -30, 12)
        let s = try XCTUnwrap(corner(o).solveLevel(vertical: -40.6))
        let horizontal = Vector3(s.offset.x - o.x, s.offset.y - o.y, 0).length
        XCTAssertLessThan(horizontal, 0.4)
        XCTAssertEqual(s.offset.z - o.z, -4, accuracy: 0.3)
    }

    func testTheWindowKeepsItsSeconds() {
        let g = samples(.zero)
        XCTAssertEqual(g.samples.count, 200)
        var h = g
        h.add(Vector3(1, 2, 3), east: Vector3(1, 0, 0), up: Vector3(0, 0, 1), time: 25)
        XCTAssertEqual(h.samples.first?.time ?? 0, 5, accuracy: 1e-9)
    }

    /// Over hours of samples the window holds the last `window` seconds, oldest first, every one of them, through each
    /// time the samples that left it are dropped; after a gap it holds the sample after the gap alone.
    func testTheWindowKeepsItsSecondsSampleAfterSample() {
        var g = GyroAidedHardIron(window: 20)
        for i in 0..<5_000 {
            let t = Double(i) / 8
            g.add(Vector3(Double(i), 0, 0), east: Vector3(1, 0, 0), up: Vector3(0, 0, 1), time: t)
            let kept = g.samples
            XCTAssertEqual(kept.count, min(i + 1, 161), "at \(t) s")
            XCTAssertEqual(kept.map { Int($0.raw.x) }, Array(max(0, i - 160)...i), "at \(t) s")
            if kept.count != min(i + 1, 161) { break }
        }
        g.add(Vector3(1, 2, 3), east: Vector3(1, 0, 0), up: Vector3(0, 0, 1), time: 1_000)
        XCTAssertEqual(g.samples.map(\.time), [1_000])
        g.removeAll()
        XCTAssertTrue(g.samples.isEmpty)
    }

    /// After a step: the field known in the frame, each sample gives the new hard iron, through a soft iron.
    func testAStepsHardIronFromTheFieldInTheFrame() throws {
        let soft = Matrix3([1.05, 0.02, 0], [0.02, 0.96, 0.01], [0, 0.01, 1.0]), o = Vector3(30, -12, 7)
        let b = Vector3(0, 19.6, -44.6)
        var after: [GyroAidedHardIron.Sample] = []
        for k in 0..<30 {
            let r = Self.worldToSensor(yaw: 40 + Double(k), pitch: 3, roll: -8)
            // raw = soft⁻¹·(R·b) + o: the calibration (o, soft) gives R·b back.
            let raw = soft.inverse! * (r * b) + o
            after.append(try XCTUnwrap(GyroAidedHardIron.sample(raw, east: r * Vector3(1, 0, 0), up: r * Vector3(0, 0, 1), time: Double(k))))
        }
        let found = try XCTUnwrap(GyroAidedHardIron.offset(after: after, field: b, matrix: soft))
        XCTAssertLessThan((found - o).length, 1e-9)
    }

    /// A calibration that leaves a hard iron makes the field wander in the frame; the right one does not.
    func testTheRightCalibrationWandersLeast() {
        let o = Vector3(20, -10, 5)
        let g = samples(o, noise: 0)
        let right = GyroAidedHardIron.wander(g.samples) { $0 - o }
        let off = GyroAidedHardIron.wander(g.samples) { $0 - o - Vector3(2, 0, 0) }
        let none = GyroAidedHardIron.wander(g.samples) { $0 }
        XCTAssertLessThan(right, 1e-9)
        XCTAssertGreaterThan(off, 0.02)
        XCTAssertGreaterThan(none, off)
    }

    /// The heading's wander (the horizontal direction in the frame): a calibration 2 µT nearer the hard iron leaves it
    /// nearer its mean on clearly more samples; the same calibration, or a worse one, does not.
    func testTheHeadingWandersLessOnlyUnderAClearlyBetterCalibration() {
        let o = Vector3(20, -10, 5)
        let g = samples(o)
        let right: (Vector3) -> Vector3 = { $0 - o }, off: (Vector3) -> Vector3 = { $0 - o - Vector3(2, 0, 0) }
        let deviations = GyroAidedHardIron.headingDeviations(g.samples, off)
        XCTAssertEqual(deviations.count, g.samples.count)
        XCTAssertGreaterThan(deviations.map(abs).max() ?? 0, 2 * .pi / 180, "2 µT of hard iron turns the heading by degrees")
        XCTAssertTrue(GyroAidedHardIron.headingWandersLess(g.samples, candidate: right, than: off, by: 2))
        XCTAssertFalse(GyroAidedHardIron.headingWandersLess(g.samples, candidate: off, than: right, by: 2))
        XCTAssertFalse(GyroAidedHardIron.headingWandersLess(g.samples, candidate: right, than: right, by: 2), "no sample differs")
        XCTAssertFalse(GyroAidedHardIron.headingWandersLess([], candidate: right, than: off, by: 2))
    }
}
