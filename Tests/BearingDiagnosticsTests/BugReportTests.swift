import BearingDiagnostics
import BearingPOSIX
import Foundation
import XCTest

/// `bearing report`'s collector in-process: the commands it runs are given (a `CommandRunner` that answers
/// as systemd and journalctl would, or fails as they do), and the archive is untarred and searched.
final class BugReportTests: XCTestCase {
    var dir: URL!

    override func setUp() {
        dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("bearing-bugreport-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    /// Runs `tar` for real (it makes the archive), answers the rest from `answers` (argv[0] → outcome), and
    /// says a command is missing otherwise; records what was asked.
    final class Runner {
        var asked: [[String]] = []
        var answers: [String: CommandOutcome] = [:]
        func run(_ argv: [String], _ timeout: Double, _ limit: Int) -> CommandOutcome {
            asked.append(argv)
            if argv[0] == "tar" { return Subprocess.run(argv, timeout: timeout, limit: limit) }
            return answers[argv[0]] ?? CommandOutcome(end: .missing)
        }
    }

    func untar(_ path: String) throws -> [String: String] {
        let into = dir.appendingPathComponent("x")
        try FileManager.default.createDirectory(at: into, withIntermediateDirectories: true)
        let r = Subprocess.run(["tar", "-xzf", path, "-C", into.path], timeout: 30, limit: 1 << 16)
        XCTAssertTrue(r.succeeded, r.summary)
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: into.path) {
            files[name] = String(decoding: try Data(contentsOf: into.appendingPathComponent(name)), as: UTF8.self)
        }
        return files
    }

    func testTheArchiveHoldsTheRedactedConfigAndNamesWhatIsMissing() throws {
        let config = dir.appendingPathComponent("bearing.yaml")
        try """
            mqtt:
              broker: mqtt://broker.example:1883
              device: boat
              username: fleet
              password_file: \(dir.appendingPathComponent("mqtt.password").path)
            magnetometer: {calibration: \(dir.appendingPathComponent("calibration.json").path)}
            """.write(to: config, atomically: true, encoding: .utf8)
        try "s3cret-pass\n".write(to: dir.appendingPathComponent("mqtt.password"), atomically: true, encoding: .utf8)
        try #"{"model":"ellipsoid"}"#.write(to: dir.appendingPathComponent("calibration.json"), atomically: true, encoding: .utf8)
        let runner = Runner()
        runner.answers["systemctl"] = CommandOutcome(end: .exited(0), stdout: Array("LoadState=loaded\nActiveState=inactive\nSubState=dead\n".utf8))
        runner.answers["journalctl"] = CommandOutcome(end: .exited(0), stdout: Array("Nov 28 bearing[12]: connected to mqtt://fleet:hunter2-url@broker.example\n".utf8))
        runner.answers["systemd-analyze"] = CommandOutcome(end: .exited(1), stderr: Array("Failed to connect to bus: No such file or directory\n".utf8))
        var report = BugReport(output: dir.appendingPathComponent("r.tar.gz").path, config: config.path, unit: "bearing.service", journalLines: 50)
        report.runner = runner.run
        report.temporaryRoot = dir.path
        report.blackBox = { _ in XCTFail("an inactive daemon is not asked for its black box"); return [] }
        let written = try report.write()
        XCTAssertEqual(written.path, dir.appendingPathComponent("r.tar.gz").path)
        var st = stat()
        XCTAssertEqual(stat(written.path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600, "it may hold positions")
        let files = try untar(written.path)
        XCTAssertTrue(Set(files.keys).isSuperset(of: ["MANIFEST.txt", "versions.txt", "config.yaml", "journal.txt", "calibration.json"]), "\(files.keys.sorted()): \(files["MANIFEST.txt"] ?? "")")
        for (name, text) in files {
            XCTAssertFalse(text.contains("hunter2-url"), "\(name) holds a URL's password")
            XCTAssertFalse(text.contains("s3cret-pass"), "\(name) holds the MQTT password")
        }
        XCTAssertTrue(files["journal.txt"]!.contains("broker.example"), files["journal.txt"]!)
        XCTAssertFalse(files.keys.contains("mqtt.password"))
        XCTAssertEqual(files["calibration.json"], #"{"model":"ellipsoid"}"#)
        let manifest = files["MANIFEST.txt"]!
        XCTAssertTrue(manifest.contains("security.txt") && manifest.contains("systemd not reachable"), manifest)
        XCTAssertTrue(manifest.contains("blackbox.bbx") && manifest.contains("daemon not running: bearing.service is inactive"), manifest)
        XCTAssertTrue(manifest.contains("journalctl -u bearing.service -n 50"), "the commands run are listed: \(manifest)")
        XCTAssertEqual(written.parts.first { $0.name == "security.txt" }?.bytes, nil)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("bearing-report.") }, [],
                       "the private staging directory is removed")
    }

    func testAnArchiveThatCannotBeWrittenThrowsNamingThePath() throws {
        var report = BugReport(output: "/nonexistent-dir/r.tar.gz", config: nil)
        report.runner = Runner().run
        XCTAssertThrowsError(try report.write()) { error in
            XCTAssertEqual("\(error)", "/nonexistent-dir/r.tar.gz: no directory /nonexistent-dir")
        }
    }
}
