import BearingModel
import BearingCalibration
import BearingSimulator
import BearingDaemon
import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The daemon and its calibration file: loaded at start, applied to ATT, published as CALIBRATION,
/// reloaded on request; bad files rejected with the calibration in force kept. Raw MAG on request.
final class CalibrationAgentTests: XCTestCase {
    /// A distorted compass held at 100° (field with no east component, so magnetic = true).
    static let hardIron = Vector3(12, -7, 4)
    static let softIron = Matrix3([1.1, 0.05, 0], [0.05, 0.9, 0], [0, 0, 1])

    func simulatedBus() -> SimulatedI2CBus {
        let bus = SimulatedI2CBus(path: "sim-bus")
        let compass = VirtualCompass(earthField: Vector3(20, 0, 45), turnRate: 0, startHeading: 100,
                                     orientation: try! Orientation(axes: "+X-Y-Z"), softIron: Self.softIron,
                                     hardIron: Self.hardIron, clock: { 0 })
        ChipModels.attach(chip: "qmc5883l", to: bus) { compass.field() }
        return bus
    }

    func config(dir: URL) -> AgentConfig {
        var c = makeAgentConfig(gpsdPort: 1, dir: dir)
        c.magnetometer.enabled = true
        c.magnetometer.reader.bus = "sim-bus"
        c.magnetometer.reader.chip = "qmc5883l"
        c.magnetometer.reader.settings.rate = 20
        c.magnetometer.orientation = try! Orientation(axes: "+X-Y-Z")
        c.magnetometer.calibrationFile = dir.appendingPathComponent("state/calibration.json").path
        c.heading.trueNorth = false
        return c
    }

    /// The exact correction of the simulated distortion, as `bearing calibrate` would write it.
    func writeCalibration(_ path: String, chip: String = "qmc5883l", units: String = "uT", fitted: Double = 1_795_000_000) throws {
        let fit = CalibrationFit(calibration: MagneticCalibration(offset: Self.hardIron, matrix: Self.softIron.inverse!),
                                 model: .ellipsoid, field: 49.2,
                                 figures: CalibrationFigures(gaps: 2, variance: 0.8, wobble: 0.5, fitError: 0.8, headingError: 0.1, regionsCovered: 99),
                                 samples: 800, used: 790, outliers: 2, radii: [40, 45, 50], regionCounts: [], warnings: [])
        let record = CalibrationRecord(fit: fit, chip: chip, device: "i2c:sim-bus:0x0d", units: units, fieldSource: "given",
                                       position: nil, time: GPSTimestamp(unixTime: fitted))
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try record.encoded().write(to: URL(fileURLWithPath: path))
    }

    func start(_ c: AgentConfig) throws -> (ServedAgent, SocketClient) {
        let bus = simulatedBus()
        let agent = ServedAgent(config: c, logger: testLogger(), openBus: { _ in bus })
        try agent.start()
        let client = try SocketClient(path: agent.socketPath)
        return (agent, client)
    }

    func testWithoutAFileHeadingsAreUncalibratedAndSaySo() throws {
        let dir = temporaryDirectory("nocal")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (agent, client) = try start(config(dir: dir))
        defer { agent.stop() }
        client.watch()
        let objects = client.collect(timeout: 10) { cls($0) == "ATT" }
        let cal = try XCTUnwrap(objects.first { cls($0) == "CALIBRATION" }, "CALIBRATION not replayed on WATCH")
        XCTAssertEqual(cal["status"] as? String, "none")
        let att = try XCTUnwrap(objects.last { cls($0) == "ATT" })
        XCTAssertEqual(att["mag_st"] as? String, "C")
        // The distortion puts the uncalibrated heading well off 100°.
        XCTAssertGreaterThan(abs(remainder((att["mheading"] as? Double ?? 100) - 100, 360)), 5)
    }

    func testACalibrationLoadedAtStartCorrectsTheHeadingAndIsPublished() throws {
        let dir = temporaryDirectory("cal")
        defer { try? FileManager.default.removeItem(at: dir) }
        let c = config(dir: dir)
        try writeCalibration(c.calibrationPath)
        let (agent, client) = try start(c)
        defer { agent.stop() }
        client.watch()
        let objects = client.collect(timeout: 10) { cls($0) == "ATT" }
        let cal = try XCTUnwrap(objects.first { cls($0) == "CALIBRATION" })
        XCTAssertEqual(cal["status"] as? String, "active")
        XCTAssertEqual(cal["chip"] as? String, "qmc5883l")
        XCTAssertEqual(cal["model"] as? String, "ellipsoid")
        XCTAssertEqual(cal["fit_error"] as? Double ?? .nan, 0.8, accuracy: 1e-9)
        XCTAssertEqual(cal["offset"] as? [Double] ?? [], [12, -7, 4])
        let att = try XCTUnwrap(objects.last { cls($0) == "ATT" })
        XCTAssertEqual(att["mag_st"] as? String, "N")
        XCTAssertEqual(att["mheading"] as? Double ?? .nan, 100, accuracy: 0.2)
        XCTAssertEqual(att["mag_len"] as? Double ?? .nan, (20.0 * 20 + 45 * 45).squareRoot(), accuracy: 0.1)
    }

    func testBadFilesAreRejectedOnReloadAndTheCalibrationInForceStays() throws {
        let dir = temporaryDirectory("badcal")
        defer { try? FileManager.default.removeItem(at: dir) }
        let c = config(dir: dir)
        try writeCalibration(c.calibrationPath, fitted: 1_795_000_000)
        let (agent, client) = try start(c)
        defer { agent.stop() }
        let fitted = GPSTimestamp(unixTime: 1_795_000_000).iso8601

        func reload(_ request: String = "?CALIBRATION={\"reload\":true};\n") -> [String: Any] {
            client.send(request)
            return client.collect(timeout: 5) { ["CALIBRATION", "ERROR"].contains(cls($0)) }.last ?? [:]
        }
        let cases: [(String, () throws -> Void)] = [
            ("not a calibration file: invalid JSON", { try "{\"format\":\"bearing-cal".write(toFile: c.calibrationPath, atomically: true, encoding: .utf8) }),
            ("fitted for chip lis3mdl, the configured chip is qmc5883l", { try self.writeCalibration(c.calibrationPath, chip: "lis3mdl") }),
            ("units \"counts\"", { try self.writeCalibration(c.calibrationPath, units: "counts") }),
            ("missing \"units\"", { try "{\"format\":\"bearing-calibration/1\",\"chip\":\"qmc5883l\"}".write(toFile: c.calibrationPath, atomically: true, encoding: .utf8) }),
        ]
        for (expected, damage) in cases {
            try damage()
            let reply = reload()
            XCTAssertEqual(cls(reply), "ERROR", expected)
            XCTAssertTrue((reply["message"] as? String ?? "").contains(expected), "\(reply)")
            XCTAssertTrue((reply["message"] as? String ?? "").contains("the calibration in force is unchanged"))
            let status = reload("?CALIBRATION;\n")
            XCTAssertEqual(status["status"] as? String, "active")
            XCTAssertEqual(status["fitted"] as? String, fitted, "the previous calibration stays in force")
            XCTAssertTrue((status["error"] as? String ?? "").contains(expected), "the last rejection is reported: \(status)")
        }
        client.watch("")
        _ = client.collect(timeout: 5) { cls($0) == "ATT" }
        let att = client.collect(timeout: 5) { cls($0) == "ATT" }.last { cls($0) == "ATT" }
        XCTAssertEqual(att?["mag_st"] as? String, "N", "still calibrated")

        // A good file replaces it, and watchers hear about it.
        try writeCalibration(c.calibrationPath, fitted: 1_796_000_000)
        client.send("?CALIBRATION={\"reload\":true};\n")
        let published = client.collect(timeout: 5) { cls($0) == "CALIBRATION" && $0["fitted"] as? String == GPSTimestamp(unixTime: 1_796_000_000).iso8601 }
        XCTAssertTrue(published.contains { cls($0) == "CALIBRATION" && $0["error"] == nil && $0["fitted"] as? String == GPSTimestamp(unixTime: 1_796_000_000).iso8601 })
        client.send("?CALIBRATION={\"reload\":1};\n")
        let refused = client.collect(timeout: 5) { cls($0) == "ERROR" }.last
        XCTAssertEqual(refused?["message"] as? String, "CALIBRATION: \"reload\" must be true or false, got 1")
    }

    func testWithChipAutoACalibrationForAnotherChipIsDroppedAtTheFirstSample() throws {
        let dir = temporaryDirectory("autochip")
        defer { try? FileManager.default.removeItem(at: dir) }
        var c = config(dir: dir)
        c.magnetometer.reader.chip = nil
        try writeCalibration(c.calibrationPath, chip: "lis3mdl")
        let (agent, client) = try start(c)
        defer { agent.stop() }
        client.watch()
        let objects = client.collect(timeout: 10) { cls($0) == "ATT" }
        let dropped = client.collect(timeout: 5) { cls($0) == "CALIBRATION" && $0["status"] as? String == "none" }
        let calibration = (objects + dropped).last { cls($0) == "CALIBRATION" }
        XCTAssertEqual(calibration?["status"] as? String, "none", "\(String(describing: calibration))")
        XCTAssertEqual(calibration?["error"] as? String, "\(c.calibrationPath): fitted for chip lis3mdl, the magnetometer found is qmc5883l")
        let att = (objects + dropped).last { cls($0) == "ATT" }
        XCTAssertEqual(att?["mag_st"] as? String, "C", "never applied to the wrong chip")
    }

    func testRawMAGGoesOnlyToClientsThatAskForIt() throws {
        let dir = temporaryDirectory("mag")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (agent, plain) = try start(config(dir: dir))
        defer { agent.stop() }
        let raw = try SocketClient(path: agent.socketPath)
        plain.watch()
        raw.watch(",\"classes\":[\"MAG\"]")
        let mags = raw.collect(timeout: 10) { o in cls(o) == "MAG" }.filter { cls($0) == "MAG" }
        let mag = try XCTUnwrap(mags.first)
        XCTAssertEqual(mag["chip"] as? String, "qmc5883l")
        // Chip axes, uncalibrated: the hard iron is in there.
        let board = VirtualCompass.boardField(earth: Vector3(20, 0, 45), heading: 100)
        let chipFrame = try Orientation(axes: "+X-Y-Z").matrix.transposed * board
        let expected = Self.softIron * chipFrame + Self.hardIron
        XCTAssertEqual(mag["x"] as? Double ?? .nan, expected.x, accuracy: 0.2)
        XCTAssertEqual(mag["y"] as? Double ?? .nan, expected.y, accuracy: 0.2)
        XCTAssertEqual(mag["z"] as? Double ?? .nan, expected.z, accuracy: 0.2)
        let plainObjects = plain.collect(timeout: 2) { _ in false }
        XCTAssertFalse(plainObjects.contains { cls($0) == "MAG" }, "MAG went to a client that did not list it")
        XCTAssertTrue(plainObjects.contains { cls($0) == "ATT" })
    }
}
