import BearingModel
import BearingCalibration
import BearingPOSIX
import BearingSimulator
import BearingDaemon
import Foundation
import DaemonTestRig
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `bearing level` as a user runs it: from an IMU recording (with and without the accelerometer
/// calibration), refusals with exit status 2, and through the running daemon, which reloads the result.
final class LevelCommandTests: XCTestCase {
    var directory: URL!

    override func setUp() { directory = temporaryDirectory("level") }
    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    /// The accelerometer's distortion (raw = A · true + b) and its calibration file, as `calibrate --accel` fits it.
    static let offset = Vector3(0.3, -0.25, 0.2)
    static let distortion = Matrix3([1.02, 0.004, 0], [0.004, 0.985, 0], [0, 0, 1.01])

    func writeCalibration() throws -> String {
        let up = [Vector3(1, 0, 0), Vector3(-1, 0, 0), Vector3(0, 1, 0), Vector3(0, -1, 0), Vector3(0, 0, 1), Vector3(0, 0, -1),
                  Vector3(1, 1, 0), Vector3(1, 0, -1), Vector3(0, -1, 1), Vector3(-1, 1, 1), Vector3(1, -1, -1), Vector3(-1, -1, 0)]
        let poses = up.map { u in
            StaticPose(start: 0, duration: 2, samples: 200, specificForce: Self.distortion * (u.normalized * AccelerometerCalibrator.standardGravity) + Self.offset,
                       noise: 0, angularRate: nil)
        }
        let record = AccelerometerCalibrationRecord(fit: try AccelerometerCalibrator().fit(poses), chip: "lsm6dsx", device: nil,
                                                    time: GPSTimestamp(unixTime: 1_795_000_000))
        let path = directory.appendingPathComponent("accelerometer.json").path
        try record.encoded().write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A board mounted `roll`° right side down and `pitch`° nose up, rocking for 2 s (or throughout, when not
    /// `still`) and then left still; chip axes forward-left-up (the simulator board's IMU, mounted "+X-Y-Z").
    func recording(roll: Double, pitch: Double, still: Bool = true, seconds: Double = 10) throws -> String {
        var imu = VirtualIMU(heading: { _ in 250 })
        imu.roll = { t in still && t > 2 ? roll : roll + 5 * sin(1.3 * t) }
        imu.pitch = { t in still && t > 2 ? pitch : pitch + 4 * sin(0.9 * t) }
        imu.gravity = AccelerometerCalibrator.standardGravity
        imu.accNoise = 0.03
        imu.gyroNoise = 0.002
        let samples = imu.readings(duration: seconds).map { r -> IMUSample in
            var s = r.sample
            s.accelerometer = Self.distortion * s.accelerometer + Self.offset
            return s
        }
        let url = directory.appendingPathComponent("level-\(roll)-\(pitch)-\(still).csv")
        try writeIMURecording(samples, to: url, header: "\(SampleFile.recordingMarker) chip=lsm6dsx device=i2c:/dev/i2c-1:0x6a")
        return url.path
    }

    func object(_ json: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], json)
    }

    var socket: String { directory.appendingPathComponent("none.sock").path }

    func testFromARecordingWithTheAccelerometerCalibration() throws {
        let calibration = try writeCalibration()
        let samples = try recording(roll: 4, pitch: -2.5)
        let output = directory.appendingPathComponent("state/level.json").path
        let (status, out, err) = try runBearing(["level", "--board", "simulator", "--samples", samples, "--accel-calibration", calibration,
                                                 "--output", output, "--json", "--socket", socket])
        XCTAssertEqual(status, 0, err)
        let result = try object(out)
        XCTAssertEqual(result["class"] as? String, "LEVEL_RESULT")
        XCTAssertEqual(result["roll"] as? Double ?? .nan, 4, accuracy: 0.03, "\(result)")
        XCTAssertEqual(result["pitch"] as? Double ?? .nan, -2.5, accuracy: 0.03, "\(result)")
        XCTAssertEqual(result["magnitude"] as? Double ?? .nan, 9.80665, accuracy: 0.005, "calibrated")
        XCTAssertEqual(result["duration"] as? Double ?? .nan, 5, accuracy: 0.02)
        XCTAssertEqual(result["source"] as? String, "file")
        XCTAssertEqual(result["accelerometer_calibration"] as? String, GPSTimestamp(unixTime: 1_795_000_000).iso8601)
        XCTAssertEqual(result["saved"] as? String, output)
        XCTAssertEqual(result["warnings"] as? [String], [])
        XCTAssertTrue(result["previous"] is NSNull)
        let record = try MountingLevelRecord.decode(Data(contentsOf: URL(fileURLWithPath: output)), source: output)
        XCTAssertEqual(record.roll, result["roll"] as? Double ?? .nan, accuracy: 1e-9)
        XCTAssertEqual(record.device, "i2c:/dev/i2c-1:0x6a")

        // Without the calibration the offset tilts the result, and it says so.
        let raw = try runBearing(["level", "--board", "simulator", "--samples", samples, "--accel-calibration", directory.appendingPathComponent("none.json").path,
                                  "--no-save", "--socket", socket])
        XCTAssertNotEqual(raw.0, 0, "an --accel-calibration that is not there is an error")
        XCTAssertTrue(raw.2.contains("none.json"), raw.2)
        let uncalibrated = try runBearing(["level", "--samples", samples, "--config", try config(), "--no-save", "--socket", socket])
        XCTAssertEqual(uncalibrated.0, 0, uncalibrated.2)
        XCTAssertTrue(uncalibrated.1.contains("accelerometer calibration: none"), uncalibrated.1)
        XCTAssertTrue(uncalibrated.1.contains("warning: the accelerometer is uncalibrated"), uncalibrated.1)
        XCTAssertFalse(uncalibrated.1.contains("roll 4.00°"), "the offset shows as tilt: \(uncalibrated.1)")
        XCTAssertTrue(uncalibrated.1.contains("not saved: --no-save"), uncalibrated.1)
    }

    /// A config with the simulator board's IMU mounting and no accelerometer calibration file.
    func config() throws -> String {
        let path = directory.appendingPathComponent("bearing.yaml").path
        try """
            magnetometer:
              calibration: \(directory.path)/empty/calibration.json
            imu:
              orientation: "+X-Y-Z"
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testAMovingBoardOrAFarTiltIsRefusedWithStatus2() throws {
        let output = directory.appendingPathComponent("level.json").path
        let moving = try recording(roll: 2, pitch: 1, still: false)
        var (status, out, err) = try runBearing(["level", "--board", "simulator", "--samples", moving, "--output", output, "--socket", socket])
        XCTAssertEqual(status, 2, out)
        XCTAssertTrue(err.contains("the board was not still: the longest still stretch lasted"), err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))

        let steep = try recording(roll: 24, pitch: 5)
        (status, out, err) = try runBearing(["level", "--board", "simulator", "--samples", steep, "--output", output, "--json", "--socket", socket])
        XCTAssertEqual(status, 2, err)
        XCTAssertTrue((try object(out)["not_saved"] as? String ?? "").contains("more than 20°: is it on its mount? --force accepts up to 45°"), out)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        (status, out, err) = try runBearing(["level", "--board", "simulator", "--samples", steep, "--output", output, "--force", "--socket", socket])
        XCTAssertEqual(status, 0, err)
        XCTAssertTrue(out.contains("saved \(output)"), out)

        let sideways = try recording(roll: 50, pitch: 0)
        (status, out, _) = try runBearing(["level", "--board", "simulator", "--samples", sideways, "--output", output + "2", "--force", "--socket", socket])
        XCTAssertEqual(status, 2)
        XCTAssertTrue(out.contains("more than 45°"), out)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output + "2"))
        (status, _, err) = try runBearing(["level", "--samples", moving, "--duration", "0.5"])
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(err.contains("--duration must be 1 to 600 seconds"), err)
    }

    /// Through the running daemon, whose IMU (`simulator:tumble`) lies level: a stale level of 3°, −2° in
    /// force tilts its ATT, and `level` takes it back out, measures 0°, 0° and has the daemon reload it.
    func testThroughTheRunningDaemonWhichReloadsTheLevel() throws {
        let socketPath = directory.appendingPathComponent("bearing.sock").path
        let levelPath = directory.appendingPathComponent("state/level.json").path
        let config = directory.appendingPathComponent("daemon.yaml").path
        try """
            gpsd:
              port: \(freePort())
              retry_max: 0.5
            socket:
              path: \(socketPath)
            magnetometer:
              bus: simulator:tumble
              rate: 20
              calibration: \(directory.path)/state/calibration.json
            imu:
              bus: simulator:tumble
            heading:
              fallback_position: [52.1, 4.3]
            pipeline:
              att: []
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let stale = MountingLevelRecord(level: MountingLevel(roll: 3, pitch: -2),
                                        pose: StaticPose(start: 0, duration: 5, samples: 500, specificForce: .zero, noise: 0, angularRate: nil),
                                        device: nil, accelerometerCalibration: nil, warnings: [], time: GPSTimestamp(unixTime: 1_795_000_000))
        try AtomicFile.write(Array(stale.encoded()), to: levelPath)
        let (daemon, _, daemonErr) = try launchBearing(["run", "--board", "simulator", "--config", config, "--log-level", "info"])
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        var waited = 0
        while !FileManager.default.fileExists(atPath: socketPath) && waited < 200 { usleep(50_000); waited += 1 }
        let watcher = try SocketClient(path: socketPath)
        watcher.watch(",\"classes\":[\"ATT\"]")
        let started = Date()
        let before = watcher.collect(timeout: 15) { cls($0) == "ATT" && Date().timeIntervalSince(started) > 4 }.last
        XCTAssertEqual(before?["roll"] as? Double ?? .nan, -3, accuracy: 0.5, "the stale level tilts a level board the other way")

        let (status, out, err) = try runBearing(["level", "--board", "simulator", "--config", config, "--json"])
        XCTAssertEqual(status, 0, err)
        let result = try object(out)
        XCTAssertEqual(result["source"] as? String, "daemon")
        XCTAssertEqual(result["roll"] as? Double ?? .nan, 0, accuracy: 0.05, "\(result)")
        XCTAssertEqual(result["pitch"] as? Double ?? .nan, 0, accuracy: 0.05, "\(result)")
        let previous = try XCTUnwrap(result["previous"] as? [String: Double])
        XCTAssertEqual(previous["roll"] ?? .nan, 3, accuracy: 1e-9)
        XCTAssertEqual(result["saved"] as? String, levelPath)
        XCTAssertEqual(result["daemon"] as? String, "reloaded, level active (\(levelPath))")

        let start = Date()
        let after = watcher.collect(timeout: 15) { cls($0) == "ATT" && Date().timeIntervalSince(start) > 5 }.last
        XCTAssertEqual(after?["roll"] as? Double ?? .nan, 0, accuracy: 0.2, "\(String(describing: after))")
        XCTAssertEqual(after?["pitch"] as? Double ?? .nan, 0, accuracy: 0.2)

        kill(daemon.processIdentifier, SIGTERM)
        daemon.waitUntilExit()
        let log = String(decoding: daemonErr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(log.contains("mounting level loaded (start)") && log.contains("mounting level loaded (client request)"), log)
    }
}
