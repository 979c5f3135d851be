import BearingModel
import BearingAttitude
import BearingCalibration
import BearingSimulator
import BearingDaemon
import Foundation
import DaemonTestRig
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `bearing calibrate` as a user runs it: from a file, from the sensor, from the running daemon; the
/// file it writes survives a crash mid-write; the daemon reloads it on SIGHUP.
final class CalibrateCommandTests: XCTestCase {
    /// Noisy samples of a known distortion over the whole sphere, as a bearing recording (µT, qmc5883l).
    /// `header` replaces the `# bearing-samples` line (nil: none).
    func writeRecording(_ url: URL, offset: Vector3, planar: Bool = false, count: Int = 1200,
                        header: String? = "\(SampleFile.recordingMarker) chip=qmc5883l device=i2c:/dev/i2c-1:0x0d units=uT") throws {
        var rng = SplitMix64(seed: 5)
        let soft = Matrix3([1.12, 0.06, -0.02], [0.06, 0.9, 0.03], [-0.02, 0.03, 1.0])
        var text = (header.map { $0 + "\n" } ?? "") + "time,x,y,z\n"
        let golden = Double.pi * (3 - 5.0.squareRoot())
        for i in 0..<count {
            var u: Vector3
            if planar {
                let h = Double(i) * 2 * .pi / Double(count)
                u = Vector3(0.5 * cos(h), 0.5 * sin(h), 0.866)
            } else {
                let z = 1 - 2 * (Double(i) + 0.5) / Double(count)
                u = Vector3((1 - z * z).squareRoot() * cos(golden * Double(i)), (1 - z * z).squareRoot() * sin(golden * Double(i)), z)
            }
            let noise = Vector3(rng.uniform(-0.4, 0.4), rng.uniform(-0.4, 0.4), rng.uniform(-0.4, 0.4))
            let v = soft * (u * 49) + offset + noise
            text += String(format: "%.3f,%.4f,%.4f,%.4f\n", 1_795_000_000 + Double(i) * 0.05, v.x, v.y, v.z)
        }
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    func object(_ json: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], json)
    }

    func offset(_ o: [String: Any]) -> Vector3 {
        let a = o["offset"] as? [Double] ?? [.nan, .nan, .nan]
        return Vector3(a[0], a[1], a[2])
    }

    func testFromAFileToASavedCalibrationFile() throws {
        let dir = temporaryDirectory("calfile")
        defer { try? FileManager.default.removeItem(at: dir) }
        let samples = dir.appendingPathComponent("samples.csv")
        try writeRecording(samples, offset: Vector3(30, -12, 8))
        let output = dir.appendingPathComponent("state/calibration.json").path
        let (status, out, err) = try runBearing(["calibrate", "--samples", samples.path, "--json", "--output", output,
                                                 "--position", "52.1,4.3", "--socket", dir.appendingPathComponent("none.sock").path])
        XCTAssertEqual(status, 0, err)
        let result = try object(out)
        XCTAssertEqual(result["model"] as? String, "ellipsoid")
        XCTAssertEqual(result["chip"] as? String, "qmc5883l", "taken from the recording's header")
        XCTAssertEqual(result["saved"] as? String, output)
        XCTAssertEqual(result["field_source"] as? String, "wmm")
        XCTAssertLessThan((offset(result) - Vector3(30, -12, 8)).length, 0.3)
        let matrix = try XCTUnwrap(result["matrix"] as? [[Double]])
        XCTAssertEqual(matrix.count, 3)
        XCTAssertTrue(matrix.allSatisfy { $0.count == 3 })
        let figures = try XCTUnwrap(result["figures"] as? [String: Any])
        for key in ["gaps", "variance", "wobble", "fit_error", "heading_error"] { XCTAssertNotNil(figures[key] as? Double, key) }
        // The file holds the same calibration, and the daemon's loader accepts it.
        let record = try CalibrationRecord.decode(Data(contentsOf: URL(fileURLWithPath: output)), source: output)
        XCTAssertEqual(record.chip, "qmc5883l")
        XCTAssertEqual(record.units, "uT")
        for (a, b) in zip(record.offset, result["offset"] as? [Double] ?? []) { XCTAssertEqual(a, b, accuracy: 1e-9) }
        XCTAssertEqual(record.field, result["field"] as? Double ?? .nan, accuracy: 1e-9)
        // The calibrated magnitude is scaled to the WMM field at 52.1 N 4.3 E (not the fitted radius,
        // which the soft iron here makes about 49·∛det = 49.4).
        let year = WorldMagneticModel.decimalYear(unixSeconds: Date().timeIntervalSince1970)
        let wmm = WorldMagneticModel.wmm2025.field(latitude: 52.1, longitude: 4.3, heightKm: 0, year: year).totalIntensity / 1000
        XCTAssertEqual(record.field, wmm, accuracy: 1e-6)
    }

    func testFlatTurnsAreRefusedUnlessForced() throws {
        let dir = temporaryDirectory("calflat")
        defer { try? FileManager.default.removeItem(at: dir) }
        let samples = dir.appendingPathComponent("flat.csv")
        try writeRecording(samples, offset: Vector3(10, 5, -3), planar: true)
        let output = dir.appendingPathComponent("calibration.json").path
        let (status, out, err) = try runBearing(["calibrate", "--samples", samples.path, "--json", "--output", output])
        XCTAssertEqual(status, 2, "refused: \(err)")
        let result = try object(out)
        XCTAssertEqual(result["model"] as? String, "planar")
        XCTAssertTrue((result["not_saved"] as? String ?? "").contains("2-D fit"), "\(result)")
        XCTAssertTrue((result["warnings"] as? [String] ?? []).contains { $0.contains("only a plane") })
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        let forced = try runBearing(["calibrate", "--samples", samples.path, "--output", output, "--force"])
        XCTAssertEqual(forced.0, 0, forced.2)
        XCTAssertTrue(forced.1.contains("planar fit"), forced.1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: output))
    }

    /// A save that cannot be made (the chip or the units unknown) is a failure, not a quiet exit 0: nothing
    /// is written, the exit status is non-zero and the message names the fix. A recording's header names
    /// the chip, and then the file is written.
    func testWithoutAKnownChipNothingIsSavedAndTheExitStatusSaysSo() throws {
        let dir = temporaryDirectory("calchip")
        defer { try? FileManager.default.removeItem(at: dir) }
        let noChip = dir.appendingPathComponent("nochip.csv")
        try writeRecording(noChip, offset: Vector3(30, -12, 8), header: "\(SampleFile.recordingMarker) device=i2c:/dev/i2c-1:0x1e units=uT")
        let output = dir.appendingPathComponent("calibration.json").path
        let socket = dir.appendingPathComponent("none.sock").path

        let (status, out, err) = try runBearing(["calibrate", "--samples", noChip.path, "--output", output, "--socket", socket])
        XCTAssertEqual(status, 1, "not saved is a failure: \(out)\(err)")
        XCTAssertTrue(out.contains("not saved: the chip is unknown") && out.contains("give --chip NAME"), out)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output), "nothing written")

        let json = try runBearing(["calibrate", "--samples", noChip.path, "--output", output, "--socket", socket, "--json"])
        XCTAssertEqual(json.0, 1, json.2)
        let result = try object(json.1)
        XCTAssertTrue(result["saved"] is NSNull, "\(result)")
        XCTAssertTrue((result["not_saved"] as? String ?? "").contains("--chip NAME"), "\(result)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output), "nothing written")

        // Nor from a file with no header at all.
        let bare = dir.appendingPathComponent("bare.csv")
        try writeRecording(bare, offset: Vector3(30, -12, 8), header: nil)
        let fromBare = try runBearing(["calibrate", "--samples", bare.path, "--output", output, "--socket", socket])
        XCTAssertEqual(fromBare.0, 1, fromBare.2)
        XCTAssertTrue(fromBare.1.contains("give --chip NAME"), fromBare.1)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output), "nothing written")

        // The units are needed as much as the chip: a file that does not say is not saved either.
        let noUnits = dir.appendingPathComponent("nounits.csv")
        try writeRecording(noUnits, offset: Vector3(30, -12, 8), header: "\(SampleFile.recordingMarker) chip=qmc5883l")
        let units = try runBearing(["calibrate", "--samples", noUnits.path, "--output", output, "--socket", socket])
        XCTAssertEqual(units.0, 1, units.1)
        XCTAssertTrue(units.1.contains("give --units uT"), units.1)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output), "nothing written")

        // --no-save asked for no file: exit 0.
        let noSave = try runBearing(["calibrate", "--samples", noChip.path, "--no-save", "--socket", socket])
        XCTAssertEqual(noSave.0, 0, noSave.2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))

        // --chip NAME: saved.
        let named = try runBearing(["calibrate", "--samples", noChip.path, "--output", output, "--socket", socket, "--chip", "hmc5883l"])
        XCTAssertEqual(named.0, 0, named.2)
        XCTAssertTrue(named.1.contains("saved \(output)"), named.1)
        XCTAssertEqual(try CalibrationRecord.decode(Data(contentsOf: URL(fileURLWithPath: output)), source: output).chip, "hmc5883l")
        try FileManager.default.removeItem(atPath: output)

        // A recording's header names the chip: saved without --chip.
        let recording = dir.appendingPathComponent("recording.csv")
        try writeRecording(recording, offset: Vector3(30, -12, 8))
        let fromHeader = try runBearing(["calibrate", "--samples", recording.path, "--output", output, "--socket", socket])
        XCTAssertEqual(fromHeader.0, 0, fromHeader.2)
        XCTAssertEqual(try CalibrationRecord.decode(Data(contentsOf: URL(fileURLWithPath: output)), source: output).chip, "qmc5883l")
    }

    func testBadInputNamesTheProblem() throws {
        let dir = temporaryDirectory("calbad")
        defer { try? FileManager.default.removeItem(at: dir) }
        let wide = dir.appendingPathComponent("wide.txt")
        try "1 2 3 4 5 6\n".write(to: wide, atomically: true, encoding: .utf8)
        let (status, _, err) = try runBearing(["calibrate", "--samples", wide.path])
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(err.contains("6 columns and no x,y,z or mx,my,mz header; pick three with --columns"), err)
        let bad = try runBearing(["calibrate", "--samples", wide.path, "--columns", "1,2"])
        XCTAssertTrue(bad.2.contains("give three columns"), bad.2)
        let missing = try runBearing(["calibrate", "--samples", dir.appendingPathComponent("nope.csv").path])
        XCTAssertNotEqual(missing.0, 0)
        XCTAssertTrue(missing.2.contains("nope.csv"), missing.2)
    }

    func testACrashMidWriteLeavesTheOldCalibrationIntact() throws {
        let dir = temporaryDirectory("calcrash")
        defer { try? FileManager.default.removeItem(at: dir) }
        let samples = dir.appendingPathComponent("samples.csv")
        try writeRecording(samples, offset: Vector3(30, -12, 8))
        let output = dir.appendingPathComponent("calibration.json").path
        XCTAssertEqual(try runBearing(["calibrate", "--samples", samples.path, "--output", output]).0, 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: output))

        try writeRecording(samples, offset: Vector3(-5, 20, 1))
        let (p, _, _) = try launchBearing(["calibrate", "--samples", samples.path, "--output", output],
                                          environment: ["BEARING_FAULT": "atomic-write-crash"])
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .uncaughtSignal, "the fault hook kills the writer mid-write")
        XCTAssertEqual(p.terminationStatus, SIGKILL)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: output)), before, "the old calibration is intact")
        XCTAssertNoThrow(try CalibrationRecord.decode(before, source: output))
        // The half-written temporary file is left beside it, and is not what the daemon reads.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("calibration.json.tmp.") }
        XCTAssertEqual(leftovers.count, 1)

        XCTAssertEqual(try runBearing(["calibrate", "--samples", samples.path, "--output", output]).0, 0)
        let after = try CalibrationRecord.decode(Data(contentsOf: URL(fileURLWithPath: output)), source: output)
        XCTAssertEqual(after.offset[1], 20, accuracy: 0.3, "a clean run replaces it")
    }

    /// A config for a simulated board that tumbles, read fast, with its files in `dir`.
    func tumblingConfig(_ dir: URL) throws -> (config: String, socket: String, calibration: String) {
        let socket = dir.appendingPathComponent("bearing.sock").path
        let calibration = dir.appendingPathComponent("state/calibration.json").path
        let config = dir.appendingPathComponent("bearing.yaml").path
        try """
        gpsd:
          port: \(freePort())
          retry_max: 0.5
        socket:
          path: \(socket)
        magnetometer:
          bus: simulator:tumble
          rate: 50
          calibration: \(calibration)
        """.write(toFile: config, atomically: true, encoding: .utf8)
        return (config, socket, calibration)
    }

    func testFromTheSensorWithARecordingThatReplaysToTheSameFit() throws {
        let dir = temporaryDirectory("calsensor")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (config, _, calibration) = try tumblingConfig(dir)
        let recording = dir.appendingPathComponent("raw.csv").path
        let (status, out, err) = try runBearing(["calibrate", "--board", "simulator", "--config", config, "--json",
                                                 "--record", recording, "--timeout", "60", "--position", "52.1,4.3"])
        XCTAssertEqual(status, 0, err)
        let live = try object(out)
        XCTAssertEqual(live["source"] as? String, "sensor")
        XCTAssertEqual(live["saved"] as? String, calibration)
        XCTAssertEqual(live["passes"] as? Bool, true, "\(live)")
        // The simulator's hard iron (VirtualCompass.demo) is recovered.
        XCTAssertLessThan((offset(live) - Vector3(21, -9.5, 6)).length, 0.5, "\(live)")
        XCTAssertTrue(err.contains("coverage and quality pass") || err.contains("timeout"), err)

        let replay = try runBearing(["calibrate", "--samples", recording, "--json", "--no-save", "--position", "52.1,4.3"])
        XCTAssertEqual(replay.0, 0, replay.2)
        let again = try object(replay.1)
        XCTAssertEqual(again["chip"] as? String, "qmc5883l")
        XCTAssertLessThan((offset(again) - offset(live)).length, 0.01, "the recording holds exactly the samples fitted")
    }

    /// On a terminal (a pty from util-linux `script`, as over SSH) the display redraws in place, shows the
    /// coverage map and a hint, and Enter finishes the collection.
    func testOnATerminalTheDisplayRedrawsAndEnterFinishes() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            throw XCTSkip("SKIPPED: /usr/bin/script (bsdutils) missing: no pty for the terminal display test")
        }
        guard FileManager.default.isExecutableFile(atPath: bearingBinary.path) else { throw XCTSkip("SKIPPED: bearing not built") }
        let dir = temporaryDirectory("caltty")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (config, _, _) = try tumblingConfig(dir)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        p.arguments = ["-q", "-e", "-c", "\(bearingBinary.path) calibrate --board simulator --config \(config) --no-save --timeout 60", "/dev/null"]
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = output
        try p.run()
        sleep(4)
        input.fileHandleForWriting.write(Data("\n".utf8))
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, text)
        XCTAssertTrue(text.contains("finishing (Enter)"), text)
        XCTAssertTrue(text.contains("\u{1B}["), "redrawn in place with cursor movement")
        XCTAssertTrue(text.contains("coverage [") && text.contains("/100 regions"), text)
        XCTAssertTrue(text.contains("█") || text.contains("▒"), "the coverage map")
        XCTAssertTrue(text.contains("hint: "), text)
        XCTAssertTrue(text.contains("not saved: --no-save"), text)
    }

    func testFromTheRunningDaemonWhichReloadsTheResultAndOnSIGHUP() throws {
        let dir = temporaryDirectory("caldaemon")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (config, socket, calibration) = try tumblingConfig(dir)
        let (daemon, _, daemonErr) = try launchBearing(["run", "--board", "simulator", "--config", config, "--log-level", "info"])
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        var waited = 0
        while !FileManager.default.fileExists(atPath: socket) && waited < 200 { usleep(50_000); waited += 1 }
        let watcher = try SocketClient(path: socket)
        watcher.watch(",\"classes\":[\"CALIBRATION\",\"ATT\"]")
        let first = watcher.collect(timeout: 10) { cls($0) == "CALIBRATION" }
        XCTAssertEqual(first.last { cls($0) == "CALIBRATION" }?["status"] as? String, "none")

        let (status, out, err) = try runBearing(["calibrate", "--socket", socket, "--board", "simulator", "--config", config,
                                                 "--json", "--timeout", "60"])
        XCTAssertEqual(status, 0, err)
        let result = try object(out)
        XCTAssertEqual(result["source"] as? String, "daemon", "the daemon owns the bus: samples come over the socket")
        XCTAssertEqual(result["saved"] as? String, calibration)
        XCTAssertEqual(result["daemon"] as? String, "reloaded, calibration active (\(calibration))")
        XCTAssertLessThan((offset(result) - Vector3(21, -9.5, 6)).length, 0.5, "\(result)")
        let active = watcher.collect(timeout: 10) { cls($0) == "CALIBRATION" && $0["status"] as? String == "active" }
        XCTAssertTrue(active.contains { cls($0) == "CALIBRATION" && $0["status"] as? String == "active" }, "watchers hear of the new calibration")
        // An ATT already made from the old calibration (in the pipeline or a throttle's window) may still come
        // after the notice; the next ones are calibrated, and none goes back to C.
        let atts = watcher.collect(timeout: 10) { cls($0) == "ATT" && $0["mag_st"] as? String == "N" }.filter { cls($0) == "ATT" }
        XCTAssertEqual(atts.last?["mag_st"] as? String, "N", "\(atts.map { $0["mag_st"] ?? "-" })")
        XCTAssertLessThanOrEqual(atts.count, 3, "calibrated within a few ATTs: \(atts.map { $0["mag_st"] ?? "-" })")
        let later = watcher.collect(timeout: 2) { _ in false }.filter { cls($0) == "ATT" }
        XCTAssertFalse(later.isEmpty)
        XCTAssertTrue(later.allSatisfy { $0["mag_st"] as? String == "N" }, "\(later.map { $0["mag_st"] ?? "-" })")

        // SIGHUP with a corrupt file: rejected, logged, the calibration in force stays.
        let good = try Data(contentsOf: URL(fileURLWithPath: calibration))
        try "not json".write(toFile: calibration, atomically: true, encoding: .utf8)
        kill(daemon.processIdentifier, SIGHUP)
        let afterBad = watcher.collect(timeout: 10) { cls($0) == "CALIBRATION" && $0["error"] != nil }
        let rejected = try XCTUnwrap(afterBad.last { cls($0) == "CALIBRATION" })
        XCTAssertEqual(rejected["status"] as? String, "active")
        XCTAssertTrue((rejected["error"] as? String ?? "").contains("invalid JSON"), "\(rejected)")

        // SIGHUP with a good file again: loaded.
        try good.write(to: URL(fileURLWithPath: calibration))
        kill(daemon.processIdentifier, SIGHUP)
        let reloaded = watcher.collect(timeout: 10) { cls($0) == "CALIBRATION" && $0["error"] == nil }
        XCTAssertTrue(reloaded.contains { cls($0) == "CALIBRATION" && $0["error"] == nil && $0["status"] as? String == "active" })

        kill(daemon.processIdentifier, SIGTERM)
        daemon.waitUntilExit()
        let log = String(decoding: daemonErr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(log.contains("calibration rejected (SIGHUP)") && log.contains("keeping the calibration fitted"), log)
        XCTAssertTrue(log.contains("calibration loaded (client request)"), log)
        XCTAssertTrue(log.contains("calibration loaded (SIGHUP)"), log)
    }
}
