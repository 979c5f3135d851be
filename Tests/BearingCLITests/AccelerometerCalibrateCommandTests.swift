import BearingModel
import BearingCalibration
import BearingPOSIX
import BearingSimulator
import Foundation
import DaemonTestRig
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `bearing calibrate --accel` as a user runs it: from an IMU recording to a saved file, refusals with their
/// exit status, bad input named, a crash mid-write, live from the simulated six-position IMU.
final class AccelerometerCalibrateCommandTests: XCTestCase {
    var directory: URL!

    override func setUp() { directory = temporaryDirectory("accelcal") }
    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    /// The recorded chip's distortion, raw = A · true + b.
    static let offset = Vector3(0.28, -0.17, 0.41)
    static let distortion = Matrix3([1.018, 0.005, 0], [0.005, 0.988, -0.004], [0, -0.004, 1.009])
    static let tilts: [(roll: Double, pitch: Double)] = [(40, 30), (-35, -40), (130, 25), (-140, -30), (60, -55), (-120, 50)]
    static let header = "\(SampleFile.recordingMarker) chip=lsm6dsx device=i2c:/dev/i2c-1:0x6a"

    /// A board held in `poses` (2 s each, 1 s between), its accelerometer distorted, 100 Hz with noise.
    func recording(_ name: String, _ poses: [(roll: Double, pitch: Double)], header: String? = header, gyroscope: Bool = true,
                   scale: Double = 1, edit: (inout [String]) -> Void = { _ in }) throws -> String {
        var imu = VirtualIMU.heldPoses(poses, hold: 2, move: 1, heading: 40)
        imu.gravity = AccelerometerCalibrator.standardGravity
        imu.accNoise = 0.02
        imu.gyroNoise = 0.002
        let samples = imu.readings(duration: Double(poses.count) * 3 - 1).map { r -> IMUSample in
            var s = r.sample
            s.accelerometer = (Self.distortion * s.accelerometer + Self.offset) * scale
            return s
        }
        let url = directory.appendingPathComponent(name)
        try writeIMURecording(samples, to: url, header: header, gyroscope: gyroscope, edit: edit)
        return url.path
    }

    func object(_ json: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], json)
    }

    func vector(_ o: [String: Any], _ key: String) -> Vector3 {
        let a = o[key] as? [Double] ?? [.nan, .nan, .nan]
        return Vector3(a[0], a[1], a[2])
    }

    func matrix(_ o: [String: Any]) -> Matrix3 {
        let m = o["matrix"] as? [[Double]] ?? [[.nan, .nan, .nan], [.nan, .nan, .nan], [.nan, .nan, .nan]]
        return Matrix3(m[0], m[1], m[2])
    }

    var socket: String { directory.appendingPathComponent("none.sock").path }

    func testFromARecordingToASavedFileBesideTheMagnetometers() throws {
        let samples = try recording("poses.csv", VirtualIMU.sixFaces + Self.tilts)
        let config = directory.appendingPathComponent("bearing.yaml").path
        let state = directory.appendingPathComponent("state")
        try "magnetometer:\n  calibration: \(state.path)/calibration.json\nimu: {}\n".write(toFile: config, atomically: true, encoding: .utf8)
        let (status, out, err) = try runBearing(["calibrate", "--accel", "--samples", samples, "--config", config, "--json", "--socket", socket])
        XCTAssertEqual(status, 0, err)
        let result = try object(out)
        let expected = state.appendingPathComponent("accelerometer.json").path
        XCTAssertEqual(result["saved"] as? String, expected, "beside the magnetometer's calibration file")
        XCTAssertEqual(result["class"] as? String, "ACCELEROMETER_CALIBRATION_RESULT")
        XCTAssertEqual(result["model"] as? String, "ellipsoid")
        XCTAssertEqual(result["chip"] as? String, "lsm6dsx", "from the recording's header")
        XCTAssertEqual(result["source"] as? String, "file")
        XCTAssertEqual(result["passes"] as? Bool, true)
        XCTAssertLessThan((vector(result, "offset") - Self.offset).length, 0.004, "\(result)")
        XCTAssertLessThan(matrix(result).maxDifference(Self.distortion.inverse!), 5e-4)
        XCTAssertEqual((result["poses"] as? [Any])?.count, 12)
        let figures = try XCTUnwrap(result["figures"] as? [String: Any])
        XCTAssertEqual(figures["directions"] as? [String], ["+x", "-x", "+y", "-y", "+z", "-z"])
        for key in ["residual_mg", "worst_mg", "worst_pose", "offset_mg", "scale_error_percent", "misalignment", "spread", "spare_degrees"] {
            XCTAssertNotNil(figures[key], key)
        }
        XCTAssertTrue(err.contains("12 still poses"), err)
        let record = try AccelerometerCalibrationRecord.decode(Data(contentsOf: URL(fileURLWithPath: expected)), source: expected)
        XCTAssertEqual(record.chip, "lsm6dsx")
        for (a, b) in zip(record.offset, result["offset"] as? [Double] ?? []) { XCTAssertEqual(a, b, accuracy: 1e-12) }

        let text = try runBearing(["calibrate", "--accel", "--samples", samples, "--no-save", "--socket", socket])
        XCTAssertEqual(text.0, 0, text.2)
        for expected in ["accelerometer calibration: ellipsoid fit to 12 still poses", "gain error +1.", "misalignment 0.", "directions +x ✓ -x ✓",
                         "pose 12 tilted", "not saved: --no-save"] {
            XCTAssertTrue(text.1.contains(expected), "\(expected) in:\n\(text.1)")
        }
    }

    func testSixFacesGiveTheAxesModelAndAMissingFaceIsRefusedUnlessForced() throws {
        let six = try recording("six.csv", VirtualIMU.sixFaces, gyroscope: false)
        let output = directory.appendingPathComponent("a.json").path
        let (status, out, err) = try runBearing(["calibrate", "--accel", "--samples", six, "--output", output, "--json", "--socket", socket])
        XCTAssertEqual(status, 0, err)
        let result = try object(out)
        XCTAssertEqual(result["model"] as? String, "axes")
        XCTAssertTrue((result["warnings"] as? [String] ?? []).contains { $0.contains("an exact fit") })
        XCTAssertTrue(err.contains("(accelerometer only)"), err)
        let diagonal = matrix(result).rows
        let truth = Self.distortion.inverse!.rows
        XCTAssertEqual(diagonal[0].x, truth[0].x, accuracy: 5e-4)
        XCTAssertEqual(diagonal[2].z, truth[2].z, accuracy: 5e-4)

        // Without -y (roll -90) and with two tilts: the axes model's parameters, not its faces.
        let partial = try recording("partial.csv", Array(VirtualIMU.sixFaces.prefix(5)) + Array(Self.tilts.prefix(2)))
        let refused = try runBearing(["calibrate", "--accel", "--model", "axes", "--samples", partial, "--output", output + "2", "--json", "--socket", socket])
        XCTAssertEqual(refused.0, 2, refused.2)
        let r = try object(refused.1)
        XCTAssertTrue((r["not_saved"] as? String ?? "").contains("-y never held up"), "\(r)")
        XCTAssertTrue(r["saved"] is NSNull)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output + "2"))
        let forced = try runBearing(["calibrate", "--accel", "--model", "axes", "--samples", partial, "--output", output + "2", "--force", "--socket", socket])
        XCTAssertEqual(forced.0, 0, forced.2)
        XCTAssertTrue(forced.1.contains("✗ -y never held up"), forced.1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: output + "2"))
    }

    func testBadInputIsNamed() throws {
        // A bad number: the line and the column.
        let bad = try recording("bad.csv", VirtualIMU.sixFaces) { $0[99] = $0[99].replacingOccurrences(of: ",", with: ",x", range: $0[99].range(of: ",")) }
        var (status, _, err) = try runBearing(["calibrate", "--accel", "--samples", bad, "--socket", socket])
        XCTAssertEqual(status, 1)
        XCTAssertTrue(err.contains("bad.csv line 102, column acc_x: \"x"), err)
        // Readings in g.
        let inG = try recording("g.csv", VirtualIMU.sixFaces, scale: 1 / 9.80665)
        (status, _, err) = try runBearing(["calibrate", "--accel", "--samples", inG, "--socket", socket])
        XCTAssertEqual(status, 1)
        XCTAssertTrue(err.contains("looks like it is in g; give m/s²"), err)
        // No chip named: fitted, not saved.
        let anonymous = try recording("anon.csv", VirtualIMU.sixFaces, header: nil)
        let output = directory.appendingPathComponent("a.json").path
        let out: String
        (status, out, err) = try runBearing(["calibrate", "--accel", "--samples", anonymous, "--output", output, "--socket", socket])
        XCTAssertEqual(status, 1, err)
        XCTAssertTrue(out.contains("not saved: the chip is unknown") && out.contains("give --chip NAME"), out)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        XCTAssertEqual(try runBearing(["calibrate", "--accel", "--samples", anonymous, "--output", output, "--chip", "mpu6xxx", "--socket", socket]).0, 0)
        XCTAssertEqual(try AccelerometerCalibrationRecord.decode(Data(contentsOf: URL(fileURLWithPath: output)), source: output).chip, "mpu6xxx")
        // Too few poses.
        let five = try recording("five.csv", Array(VirtualIMU.sixFaces.prefix(5)))
        (status, _, err) = try runBearing(["calibrate", "--accel", "--samples", five, "--socket", socket])
        XCTAssertEqual(status, 1)
        XCTAssertTrue(err.contains("5 still poses; a calibration needs at least 6"), err)
        // Options that belong to the magnetometer.
        (status, _, err) = try runBearing(["calibrate", "--accel", "--samples", five, "--columns", "1,2,3"])
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(err.contains("--columns is for the magnetometer; it does not go with --accel"), err)
        (status, _, err) = try runBearing(["calibrate", "--accel", "--samples", five, "--model", "sphere"])
        XCTAssertTrue(err.contains("--model sphere: with --accel, allowed: axes, ellipsoid"), err)
    }

    func testACrashMidWriteLeavesTheOldFileIntact() throws {
        let samples = try recording("poses.csv", VirtualIMU.sixFaces + Self.tilts)
        let output = directory.appendingPathComponent("accelerometer.json").path
        XCTAssertEqual(try runBearing(["calibrate", "--accel", "--samples", samples, "--output", output, "--socket", socket]).0, 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: output))
        let (p, _, _) = try launchBearing(["calibrate", "--accel", "--samples", samples, "--output", output, "--chip", "other", "--socket", socket],
                                          environment: ["BEARING_FAULT": "atomic-write-crash"])
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .uncaughtSignal)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: output)), before, "the old calibration is intact")
        XCTAssertNoThrow(try AccelerometerCalibrationRecord.decode(before, source: output))
    }

    /// Live from the simulated IMU held in the six faces and tilts in turn (`simulator:six-position`): the
    /// simulator's errors are recovered, and the recording replays to the same fit.
    func testLiveFromTheSimulatedIMUWithARecordingThatReplays() throws {
        let recordingPath = directory.appendingPathComponent("live.csv").path
        let (status, out, err) = try runBearing(["calibrate", "--accel", "--board", "simulator", "--bus", "simulator:six-position", "--model", "ellipsoid",
                                                 "--no-save", "--json", "--record", recordingPath, "--timeout", "60", "--socket", socket])
        XCTAssertEqual(status, 0, err)
        let live = try object(out)
        XCTAssertEqual(live["source"] as? String, "sensor")
        XCTAssertEqual(live["model"] as? String, "ellipsoid")
        XCTAssertEqual(live["chip"] as? String, "lsm6dsx")
        XCTAssertTrue(err.contains("every direction held and the fit passes"), err)
        // BusOpener.sixPositionOffset and sixPositionDistortion.
        XCTAssertLessThan((vector(live, "offset") - Vector3(0.3, -0.2, 0.45)).length, 0.003, "\(live)")
        let truth = Matrix3([1.02, 0.004, -0.003], [0.004, 0.985, 0.006], [-0.003, 0.006, 1.01]).inverse!
        XCTAssertLessThan(matrix(live).maxDifference(truth), 3e-4, "\(live)")

        let replay = try runBearing(["calibrate", "--accel", "--samples", recordingPath, "--model", "ellipsoid", "--no-save", "--json", "--socket", socket])
        XCTAssertEqual(replay.0, 0, replay.2)
        XCTAssertLessThan((vector(try object(replay.1), "offset") - vector(live, "offset")).length, 1e-3, "the recording holds the samples fitted")
    }

    /// The daemon owns the IMU and publishes no raw accelerometer samples: a live calibration says so.
    func testWithTheDaemonRunningALiveCalibrationAsksToStopItOrGiveDirect() throws {
        let path = directory.appendingPathComponent("bearing.sock").path
        let listener = try UnixSocket.listen(path: path, mode: 0o600)
        defer { close(listener) }
        let (status, _, err) = try runBearing(["calibrate", "--accel", "--board", "simulator", "--socket", path])
        XCTAssertEqual(status, 1)
        XCTAssertTrue(err.contains("the bearing daemon at \(path) owns the IMU") && err.contains("--direct"), err)
    }
}
