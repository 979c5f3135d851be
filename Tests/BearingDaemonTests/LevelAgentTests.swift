import BearingCompass
import BearingModel
import BearingAttitude
import BearingPublishing
import BearingCalibration
import BearingPOSIX
import BearingSensors
import BearingSimulator
import BearingDaemon
import DaemonTestRig
import Foundation
import TestSupport
import XCTest

/// The accelerometer calibration and mounting level files in the running agent: an LSM6DSOX and a QMC5883L
/// model on one simulated bus, fed by a board mounted slightly off level on a level vehicle heading 100°;
/// the files loaded at start and on reload, applied to ATT, reported in CALIBRATION, bad files rejected.
final class LevelAgentTests: XCTestCase {
    /// The accelerometer's own distortion in its axes: raw = A · true + b.
    static let accOffset = Vector3(0.35, -0.25, 0.4)
    static let accDistortion = Matrix3([1.025, 0.006, 0], [0.006, 0.98, -0.004], [0, -0.004, 1.015])

    func config(dir: URL) -> AgentConfig {
        var c = makeFusedAgentConfig(dir: dir, magnetometer: "qmc5883l", imu: "lsm6dsx", fallback: DaemonRig.fallback)
        c.magnetometer.calibrationFile = dir.appendingPathComponent("state/calibration.json").path
        return c
    }

    /// The board: heading 100° magnetic, mounted `roll`° right side down and `pitch`° nose up.
    func bus(roll: Double, pitch: Double, distorted: Bool = false) -> SimulatedI2CBus {
        return stillBoardBus(heading: 100, roll: roll, pitch: pitch, field: DaemonRig.fallbackField(), gravity: AccelerometerCalibrator.standardGravity,
                             imu: "lsm6dsox", magnetometer: "qmc5883l") { m in
            guard distorted else { return m }
            var m = m
            m.specificForce = Self.accDistortion * m.specificForce + Self.accOffset
            return m
        }
    }

    func writeLevel(_ path: String, roll: Double, pitch: Double, units: String = MountingLevelRecord.degrees) throws {
        let level = MountingLevel(roll: roll, pitch: pitch)
        let pose = StaticPose(start: 0, duration: 5, samples: 500, specificForce: .zero, noise: 0, angularRate: nil)
        var record = MountingLevelRecord(level: level, pose: pose, device: "i2c:sim-bus:0x6a", accelerometerCalibration: nil, warnings: [],
                                         time: GPSTimestamp(unixTime: 1_795_000_000))
        record.units = units
        try AtomicFile.write(Array(record.encoded()), to: path)
    }

    /// The calibration `bearing calibrate --accel` would fit to twelve exact poses of this accelerometer.
    func writeAccelerometerCalibration(_ path: String, chip: String = "lsm6dsx") throws {
        let up = [Vector3(1, 0, 0), Vector3(-1, 0, 0), Vector3(0, 1, 0), Vector3(0, -1, 0), Vector3(0, 0, 1), Vector3(0, 0, -1),
                  Vector3(1, 1, 0), Vector3(1, 0, -1), Vector3(0, -1, 1), Vector3(-1, 1, 1), Vector3(1, -1, -1), Vector3(-1, -1, 0)]
        let poses = up.map { u in
            StaticPose(start: 0, duration: 2, samples: 200,
                       specificForce: Self.accDistortion * (u.normalized * AccelerometerCalibrator.standardGravity) + Self.accOffset,
                       noise: 0, angularRate: nil)
        }
        let fit = try AccelerometerCalibrator().fit(poses)
        XCTAssertEqual(fit.model, .ellipsoid)
        XCTAssertLessThan((fit.correction.offset - Self.accOffset).length, 1e-6)
        let record = AccelerometerCalibrationRecord(fit: fit, chip: chip, device: "i2c:sim-bus:0x6a", time: GPSTimestamp(unixTime: 1_795_000_000))
        try AtomicFile.write(Array(record.encoded()), to: path)
    }

    /// The last ATT of `seconds` seconds of them.
    func settledATT(_ client: SocketClient, seconds: Double) -> [String: Any]? {
        let start = Date()
        return client.collect(timeout: seconds + 10) { cls($0) == "ATT" && Date().timeIntervalSince(start) > seconds }.last { cls($0) == "ATT" }
    }

    /// The reply to a CALIBRATION request, after what was already on its way (a CALIBRATION published to
    /// watchers by the last reload comes after that reload's reply).
    func reload(_ client: SocketClient, _ request: String = "?CALIBRATION={\"reload\":true};\n") -> [String: Any] {
        _ = client.collect(timeout: 0.3) { _ in false }
        client.send(request)
        return client.collect(timeout: 5) { ["CALIBRATION", "ERROR"].contains(cls($0)) }.last ?? [:]
    }

    func testALevelFileLoadedOnReloadTakesTheMountingTiltOut() throws {
        let dir = temporaryDirectory("level")
        defer { try? FileManager.default.removeItem(at: dir) }
        let c = config(dir: dir)
        XCTAssertEqual(c.levelPath, dir.appendingPathComponent("state/level.json").path, "beside the magnetometer's calibration")
        let agent = ServedAgent(config: c, logger: testLogger(), openBus: { [bus = bus(roll: 5, pitch: -3)] _ in bus })
        try agent.start()
        defer { agent.stop() }
        let client = try SocketClient(path: agent.socketPath)
        client.watch()

        let tilted = try XCTUnwrap(settledATT(client, seconds: 5))
        XCTAssertEqual(tilted["roll"] as? Double ?? .nan, 5, accuracy: 0.3)
        XCTAssertEqual(tilted["pitch"] as? Double ?? .nan, -3, accuracy: 0.3)
        let none = reload(client, "?CALIBRATION;\n")
        XCTAssertEqual((none["level"] as? [String: Any])?["status"] as? String, "none")
        XCTAssertEqual((none["accelerometer"] as? [String: Any])?["status"] as? String, "none")

        try writeLevel(c.levelPath, roll: 5, pitch: -3)
        let loaded = reload(client)
        XCTAssertEqual(cls(loaded), "CALIBRATION", "\(loaded)")
        let level = try XCTUnwrap(loaded["level"] as? [String: Any], "\(loaded)")
        XCTAssertEqual(level["status"] as? String, "active")
        XCTAssertEqual(level["file"] as? String, c.levelPath)
        XCTAssertEqual(level["roll"] as? Double ?? .nan, 5, accuracy: 1e-9)
        XCTAssertEqual(level["pitch"] as? Double ?? .nan, -3, accuracy: 1e-9)

        let levelled = try XCTUnwrap(settledATT(client, seconds: 6))
        XCTAssertEqual(levelled["roll"] as? Double ?? .nan, 0, accuracy: 0.3, "\(levelled)")
        XCTAssertEqual(levelled["pitch"] as? Double ?? .nan, 0, accuracy: 0.3, "\(levelled)")
        XCTAssertEqual(levelled["mheading"] as? Double ?? .nan, 100, accuracy: 1, "the heading is unchanged")
        XCTAssertEqual(levelled["acc_x"] as? Double ?? .nan, 0, accuracy: 0.05, "ATT's vectors are levelled")
        XCTAssertEqual(levelled["acc_y"] as? Double ?? .nan, 0, accuracy: 0.05)
        XCTAssertEqual(levelled["acc_z"] as? Double ?? .nan, -9.807, accuracy: 0.05)

        // What SIGHUP runs: a corrupt file is rejected, named, and the level in force stays.
        try "{\"format\":\"bearing-level/1\",\"roll\":".write(toFile: c.levelPath, atomically: true, encoding: .utf8)
        let why = try XCTUnwrap(agent.reloadCalibration(reason: "SIGHUP"))
        XCTAssertTrue(why.contains("\(c.levelPath): not a mounting level file: invalid JSON") && why.contains("the mounting level in force is unchanged"), why)
        let kept = reload(client, "?CALIBRATION;\n")["level"] as? [String: Any]
        XCTAssertEqual(kept?["status"] as? String, "active")
        XCTAssertEqual(kept?["roll"] as? Double ?? .nan, 5, accuracy: 1e-9)
        XCTAssertTrue((kept?["error"] as? String ?? "").contains("invalid JSON"), "\(String(describing: kept))")
        let still = try XCTUnwrap(settledATT(client, seconds: 1))
        XCTAssertEqual(still["roll"] as? Double ?? .nan, 0, accuracy: 0.3)
    }

    func testAnAccelerometerCalibrationAtStartCorrectsTheAccelerometerAndBadFilesAreRejected() throws {
        let dir = temporaryDirectory("accelcal")
        defer { try? FileManager.default.removeItem(at: dir) }
        var c = config(dir: dir)
        c.imu.calibrationFile = dir.appendingPathComponent("elsewhere/accel.json").path
        XCTAssertEqual(c.accelerometerCalibrationPath, c.imu.calibrationFile)
        try writeAccelerometerCalibration(c.accelerometerCalibrationPath)
        try writeLevel(c.levelPath, roll: 0, pitch: 0)
        let agent = ServedAgent(config: c, logger: testLogger(), openBus: { [bus = bus(roll: 0, pitch: 0, distorted: true)] _ in bus })
        try agent.start()
        defer { agent.stop() }
        let client = try SocketClient(path: agent.socketPath)
        client.watch()

        let objects = client.collect(timeout: 15) { cls($0) == "ATT" }
        let calibration = try XCTUnwrap(objects.first { cls($0) == "CALIBRATION" }, "CALIBRATION replayed on WATCH")
        let accelerometer = try XCTUnwrap(calibration["accelerometer"] as? [String: Any])
        XCTAssertEqual(accelerometer["status"] as? String, "active")
        XCTAssertEqual(accelerometer["chip"] as? String, "lsm6dsx")
        XCTAssertEqual(accelerometer["model"] as? String, "ellipsoid")
        let offset = accelerometer["offset"] as? [Double] ?? []
        XCTAssertEqual(offset.count, 3)
        for (a, b) in zip(offset, [0.35, -0.25, 0.4]) { XCTAssertEqual(a, b, accuracy: 1e-6) }
        let att = try XCTUnwrap(settledATT(client, seconds: 4))
        // Uncorrected, the distortion reads 9.807·1.015 + 0.4 on z and rolls the board by ~1.5°.
        XCTAssertEqual(att["acc_len"] as? Double ?? .nan, 9.807, accuracy: 0.01, "\(att)")
        XCTAssertEqual(att["roll"] as? Double ?? .nan, 0, accuracy: 0.2)
        XCTAssertEqual(att["pitch"] as? Double ?? .nan, 0, accuracy: 0.2)

        let cases: [(String, String, () throws -> Void)] = [
            ("fitted for chip mpu6xxx, the configured chip is lsm6dsx", "accelerometer calibration",
             { try self.writeAccelerometerCalibration(c.accelerometerCalibrationPath, chip: "mpu6xxx") }),
            ("units \"rad\": roll and pitch are in degrees", "mounting level", { try self.writeLevel(c.levelPath, roll: 1, pitch: 1, units: "rad") }),
        ]
        for (expected, kind, damage) in cases {
            try damage()
            let reply = reload(client)
            XCTAssertEqual(cls(reply), "ERROR", expected)
            let message = reply["message"] as? String ?? ""
            XCTAssertTrue(message.contains(expected) && message.contains("the \(kind) in force is unchanged"), message)
        }
        let status = reload(client, "?CALIBRATION;\n")
        XCTAssertEqual((status["accelerometer"] as? [String: Any])?["status"] as? String, "active", "the calibration in force stays")
        XCTAssertTrue(((status["accelerometer"] as? [String: Any])?["error"] as? String ?? "").contains("mpu6xxx"))
        XCTAssertEqual((status["level"] as? [String: Any])?["status"] as? String, "active")
        let later = try XCTUnwrap(settledATT(client, seconds: 1))
        XCTAssertEqual(later["acc_len"] as? Double ?? .nan, 9.807, accuracy: 0.01, "still corrected")
    }
}
