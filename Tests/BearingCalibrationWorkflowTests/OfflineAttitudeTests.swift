import BearingCalibration
import BearingCalibrationWorkflow
import BearingModel
import BearingSimulator
import Foundation
import XCTest

/// `bearing attitude`'s workflow in-process: the filter over a sample file of a simulated board (the simulator's
/// own motion model is the truth), the north turned by a declination, units refused, nothing learnt when
/// calibration is off.
final class OfflineAttitudeTests: XCTestCase {
    /// A board heeled 15° turning from 60° at 5 °/s for 20 s at 100 Hz, as the CSV the command reads.
    func recording(magnetometerScale: Double = 1) throws -> (file: IMUSampleFile, truth: [Double]) {
        var imu = VirtualIMU(heading: { t in 60 + 5 * t })
        imu.roll = { _ in 15 }
        imu.gyroNoise = 0.002
        imu.accNoise = 0.03
        imu.magNoise = 0.2
        let readings = imu.readings(duration: 20)
        var lines = ["t,acc_x,acc_y,acc_z,gyr_x,gyr_y,gyr_z,mag_x,mag_y,mag_z"]
        for r in readings {
            let s = r.sample, a = s.accelerometer, g = s.gyroscope, m = (s.magnetometer ?? .zero) * magnetometerScale
            lines.append([s.time, a.x, a.y, a.z, g.x, g.y, g.z, m.x, m.y, m.z].map { String(format: "%.7g", $0) }.joined(separator: ","))
        }
        let file = try IMUSampleFile.parse(lines.joined(separator: "\n") + "\n", source: "turn.csv", requireGyroscope: false)
        return (file, readings.map { 60 + 5 * $0.sample.time })
    }

    func difference(_ a: Double, _ b: Double) -> Double { (a - b + 540).truncatingRemainder(dividingBy: 360) - 180 }

    func testTheHeadingFollowsATurningHeeledBoardAndTheDeclinationTurnsIt() throws {
        let (file, truth) = try recording()
        var options = OfflineAttitude.Options()
        options.calibrate = false
        var headings: [Double] = []
        var notes: [String] = []
        let outcome = OfflineAttitude.run(file, track: nil, options: options, now: 1_790_000_000, note: { notes.append($0) }) { headings.append($0.angles.heading) }
        XCTAssertEqual(headings.count, file.samples.count, "one attitude per sample")
        let settled = zip(headings, truth).dropFirst(300)
        let worst = settled.map { abs(difference($0.0, $0.1)) }.max() ?? .nan
        XCTAssertLessThan(worst, 1.5, "magnetic heading after 3 s, worst error \(worst)°")
        XCTAssertNil(outcome.calibration, "calibration off learns nothing")
        XCTAssertNil(outcome.driving)
        XCTAssertNil(outcome.swing)

        options.declination = 12.5
        var turned: [Double] = []
        _ = OfflineAttitude.run(file, track: nil, options: options, now: 1_790_000_000, note: { _ in }) { turned.append($0.angles.heading) }
        XCTAssertEqual(difference(turned.last!, headings.last! + 12.5), 0, accuracy: 0.002, "true north is 12.5° west of magnetic here")
    }

    func testAMagnetometerInGaussIsRefusedOnlyWhenCalibrationNeedsMicrotesla() throws {
        let (file, _) = try recording(magnetometerScale: 0.01)
        var options = OfflineAttitude.Options()
        let problem = try XCTUnwrap(OfflineAttitude.unitProblem(file, source: "turn.csv", options: options))
        XCTAssertTrue(problem.contains("gauss") && problem.contains("--calibration off"), problem)
        options.calibrate = false
        XCTAssertNil(OfflineAttitude.unitProblem(file, source: "turn.csv", options: options))
    }
}
