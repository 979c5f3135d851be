import BearingCalibration
import BearingOnlineCalibration
import BearingModel
import BearingSimulator
import Foundation
import XCTest

/// The deviation learnt from driving, kept across restarts: written and read back it gives the same
/// deviation at every heading; it holds only under the calibration it was seen after (or a refinement of it);
/// a file edited into nonsense is refused naming what is wrong.
final class DrivingDeviationRecordTests: XCTestCase {
    static let calibration = MagneticCalibration(offset: Vector3(21, -9.5, 6), matrix: Matrix3([1.04, 0.01, 0], [0.01, 0.97, 0], [0, 0, 1]))

    /// Straight epochs at every heading with SwingSolverTests' curve.
    static func learnt() -> PassiveDeviation {
        var p = PassiveDeviation()
        var random = SplitMix64(seed: 11)
        for k in 0..<900 {
            let compass = Double(k * 13 % 360) + random.uniform(0, 1)
            let course = compass + SwingSolverTests.truthCurve.deviation(atCompassHeading: compass) + random.uniform(-0.5, 0.5)
            p.add(compass: compass, track: course, speed: 12, turnRate: 0, eps: 0.2, variation: 0)
        }
        return p
    }

    func testKeptAndReadBackItGivesTheSameDeviationEverywhere() throws {
        let p = Self.learnt()
        XCTAssertEqual(p.sectorsCovered, 12)
        let data = DrivingDeviationRecord(p, after: Self.calibration, time: "2026-11-27T10:00:00.000Z").encoded()
        let record = try DrivingDeviationRecord.decode(data, source: "driving-deviation.json")
        var restored = PassiveDeviation()
        XCTAssertNil(restored.deviation(atCompassHeading: 0))
        restored.restore(try record.observations())
        XCTAssertEqual(restored.curve, p.curve)
        for d in stride(from: 0.0, to: 360, by: 7.5) {
            XCTAssertEqual(try XCTUnwrap(restored.deviation(atCompassHeading: d)), try XCTUnwrap(p.deviation(atCompassHeading: d)), accuracy: 1e-12)
        }
        // Learning goes on from where it was: one more epoch changes it as it would have changed the original.
        var original = p
        original.add(compass: 100, track: 110, speed: 12, turnRate: 0, eps: 0.2, variation: 0)
        restored.add(compass: 100, track: 110, speed: 12, turnRate: 0, eps: 0.2, variation: 0)
        XCTAssertEqual(restored.curve, original.curve)
    }

    /// The vehicle's forward axis learnt on the same drive is kept with it, and read back as it was written; a file
    /// written before Bearing kept it has none.
    func testTheForwardAxisIsKeptWithIt() throws {
        let across = Vector3(0.02, -0.999, 0.03).normalized
        let data = DrivingDeviationRecord(Self.learnt(), after: Self.calibration, time: "2026-11-27T10:00:00.000Z", forward: across).encoded()
        let record = try DrivingDeviationRecord.decode(data, source: "driving-deviation.json")
        let f = try XCTUnwrap(try record.forwardAxis())
        XCTAssertEqual((f - across).length, 0, accuracy: 1e-12)
        let without = try DrivingDeviationRecord.decode(DrivingDeviationRecord(Self.learnt(), after: Self.calibration, time: "t").encoded(), source: "x")
        XCTAssertNil(try without.forwardAxis())
        XCTAssertNil(try without.upAxis())
    }

    /// So is the vehicle's "up" (`AttitudeFusion.vehicleUp`).
    func testTheVehiclesUpIsKeptWithIt() throws {
        let up = Vector3(0.998, 0.02, -0.05).normalized
        let data = DrivingDeviationRecord(Self.learnt(), after: Self.calibration, time: "2026-12-01T10:00:00.000Z", up: up).encoded()
        let u = try XCTUnwrap(try DrivingDeviationRecord.decode(data, source: "driving-deviation.json").upAxis())
        XCTAssertEqual((u - up).length, 0, accuracy: 1e-12)
    }

    func testItHoldsOnlyUnderTheCalibrationItWasSeenAfterOrARefinement() {
        let record = DrivingDeviationRecord(Self.learnt(), after: Self.calibration, time: "2026-11-27T10:00:00.000Z")
        let c = Self.calibration
        XCTAssertTrue(record.holds(under: c, field: 50))
        // A refinement: the hard iron 0.3 µT away (under 1 % of 50 µT), the soft iron 0.5 % off.
        let refined = MagneticCalibration(offset: c.offset + Vector3(0.3, 0, 0), matrix: Matrix3([1.045, 0.01, 0], [0.01, 0.97, 0], [0, 0, 1]))
        XCTAssertTrue(record.holds(under: refined, field: 50))
        XCTAssertFalse(record.holds(under: MagneticCalibration(offset: c.offset + Vector3(0, 2, 0), matrix: c.matrix), field: 50), "the hard iron moved 2 µT")
        XCTAssertFalse(record.holds(under: MagneticCalibration(offset: c.offset, matrix: .identity), field: 50), "another soft iron")
        XCTAssertFalse(record.holds(under: .identity, field: 50))
    }

    func testNonsenseIsRefusedNamingWhatIsWrong() throws {
        let good = String(decoding: DrivingDeviationRecord(Self.learnt(), after: Self.calibration, time: "2026-11-27T10:00:00.000Z").encoded(), as: UTF8.self)
        func refused(_ edit: (inout [String: Any]) -> Void) -> String {
            var o = try! JSONSerialization.jsonObject(with: Data(good.utf8)) as! [String: Any]
            edit(&o)
            let data = try! JSONSerialization.data(withJSONObject: o)
            do throws(CalibrationFitError) {
                _ = try DrivingDeviationRecord.decode(data, source: "/x/driving-deviation.json")
                return "accepted"
            } catch {
                return error.message
            }
        }
        XCTAssertEqual(refused { _ in }, "accepted")
        var cases: [(String, (inout [String: Any]) -> Void)] = [
            ("format \"bearing-driving-deviation-0\"", { $0["format"] = "bearing-driving-deviation-0" }),
            ("\"sectors\" has 11 sectors, not 12", { $0["sectors"] = Array(($0["sectors"] as! [Any]).prefix(11)) }),
            ("\"sectors\"[2][0]: compass heading 10.0° is not in sector 2 (60–90°)", { o in
                var s = o["sectors"] as! [[[Double]]]; s[2][0] = [10, 1]; o["sectors"] = s }),
            ("\"sectors\"[3][1]: deviation 90.0° is beyond ±45.0°", { o in
                var s = o["sectors"] as! [[[Double]]]; s[3][1][1] = 90; o["sectors"] = s }),
            ("\"sectors\"[4][0] must be [compass, deviation]", { o in
                var s = o["sectors"] as! [[[Double]]]; s[4][0] = [125]; o["sectors"] = s }),
            ("\"matrix\" has determinant", { $0["matrix"] = [[1, 0, 0], [0, 1, 0], [0, 0, -1]] }),
            ("missing \"offset\"", { $0["offset"] = nil }),
        ]
        cases.append(("\"offset\" must be three finite numbers", { $0["offset"] = [1, 2] }))
        cases.append(("\"forward\" must be a unit vector: three finite numbers of length 1", { $0["forward"] = [1, 0] }))
        cases.append(("\"forward\" must be a unit vector: three finite numbers of length 1", { $0["forward"] = [0.5, 0, 0] }))
        cases.append(("\"up\" must be a unit vector: three finite numbers of length 1", { $0["up"] = [0, 1] }))
        cases.append(("\"up\" must be a unit vector: three finite numbers of length 1", { $0["up"] = [0, 0, -2] }))
        for (expected, edit) in cases {
            let message = refused(edit)
            XCTAssertTrue(message.hasPrefix("/x/driving-deviation.json: ") && message.contains(expected), "\(expected): \(message)")
        }
    }
}
