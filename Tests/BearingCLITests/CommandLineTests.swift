import BearingModel
import Foundation
import DaemonTestRig
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The `bearing` executable as a user runs it: separate processes, a real gpsd, the socket, the data log.
final class CommandLineTests: XCTestCase {
    var binary: URL { bearingBinary }

    func launch(_ args: [String]) throws -> (Process, Pipe, Pipe) { try launchBearing(args) }

    func runToEnd(_ args: [String]) throws -> (Int32, String, String) { try runBearing(args) }

    func testRunWatchDataLogAndGracefulStop() throws {
        try requireGpsfake()
        let dir = temporaryDirectory("cli")
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = try writeTrack(in: dir) { $0.epochs = 200 }.url
        let port = freePort()
        let socket = dir.appendingPathComponent("bearing.sock").path
        let dataLog = dir.appendingPathComponent("data.ndjson").path
        let config = dir.appendingPathComponent("bearing.yaml")
        try """
        # test config
        gpsd:
          retry_initial: 0.05
          retry_max: 0.5
        pipeline:
          tpv: [{op: min_mode, mode: 2}]
          sky: []
        """.write(to: config, atomically: true, encoding: .utf8)

        let (agent, _, agentErr) = try launch(["run", "--config", config.path, "--gpsd", "127.0.0.1:\(port)",
                                               "--socket", socket, "--data-log", dataLog, "--log-level", "info"])
        defer { if agent.isRunning { kill(agent.processIdentifier, SIGKILL) } }
        var waited = 0
        while !FileManager.default.fileExists(atPath: socket) && waited < 100 { usleep(50_000); waited += 1 }
        let fake = try GPSFake(log: log, port: port, pace: 0.01)
        defer { fake.stop() }

        let (status, out, err) = try runToEnd(["watch", "--socket", socket, "--json", "--count", "8", "--class", "TPV"])
        XCTAssertEqual(status, 0, err)
        let lines = out.split(separator: "\n")
        XCTAssertEqual(lines.count, 8)
        for line in lines {
            let o = try XCTUnwrap((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any], String(line))
            XCTAssertEqual(cls(o), "TPV")
            XCTAssertGreaterThanOrEqual(o["mode"] as? Int ?? 0, 2, "the config's min_mode filter applies")
        }
        let (status2, readable, _) = try runToEnd(["watch", "--socket", socket, "--count", "2", "--class", "TPV"])
        XCTAssertEqual(status2, 0)
        XCTAssertTrue(readable.hasPrefix("TPV "), readable)
        XCTAssertTrue(readable.contains("°N"), readable)

        kill(agent.processIdentifier, SIGTERM)
        agent.waitUntilExit()
        XCTAssertEqual(agent.terminationStatus, 0, "SIGTERM is a graceful stop")
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "the socket file is removed on stop")
        let stderr = String(decoding: agentErr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(stderr.contains("<5>gpsd connected"), "journald priority prefixes on a non-TTY stderr: \(stderr)")

        let records = try String(contentsOfFile: dataLog, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(records.last, "", "the data log ends with a complete line")
        XCTAssertGreaterThan(records.count, 8)
        for r in records.dropLast() {
            XCTAssertNotNil((try? JSONSerialization.jsonObject(with: Data(r.utf8))) as? [String: Any], "not a JSON line: \(r)")
        }
    }

    func testBadConfigIsRefusedWithItsKeyAndLine() throws {
        let dir = temporaryDirectory("badcfg")
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("bearing.yaml")
        try "gpsd:\n  port: 2947\n  silence_timout: 3\n".write(to: config, atomically: true, encoding: .utf8)
        let (status, _, err) = try runToEnd(["run", "--config", config.path, "--socket", dir.appendingPathComponent("s").path])
        XCTAssertEqual(status, 78, "a config error is EX_CONFIG, which the unit's RestartPreventExitStatus= holds: \(err)")
        XCTAssertTrue(err.contains("bearing.yaml:3"), err)
        XCTAssertTrue(err.contains("unknown key \"gpsd.silence_timout\""), err)
        XCTAssertFalse(err.contains("Usage:"), "no usage text after a config error: \(err)")
        XCTAssertEqual(err.split(separator: "\n").count, 1, "one line: \(err)")

        let (status2, _, err2) = try runToEnd(["run", "--gpsd", "localhost", "--socket", dir.appendingPathComponent("s").path])
        XCTAssertEqual(status2, 64, "a command-line error is EX_USAGE: \(err2)")
        XCTAssertTrue(err2.contains("expected HOST:PORT"), err2)

        // A missing config file and a bad board profile are config errors too; so for calibrate and level.
        for args in [["run", "--config", dir.appendingPathComponent("missing.yaml").path],
                     ["run", "--board", "no-such-board"],
                     ["calibrate", "--config", config.path, "--no-save"],
                     ["level", "--config", config.path, "--no-save"]] {
            let (s, _, e) = try runToEnd(args + ["--socket", dir.appendingPathComponent("s").path])
            XCTAssertEqual(s, 78, "\(args): \(e)")
            XCTAssertFalse(e.contains("Usage:"), "\(args): \(e)")
        }
    }

    /// The unit does not restart a service that exits for a bad command line or config.
    func testUnitDoesNotRestartForUsageOrConfigErrors() throws {
        let unit = try String(contentsOf: repoRoot.appendingPathComponent("systemd/bearing.service"), encoding: .utf8)
        let lines = unit.split(separator: "\n").filter { $0.hasPrefix("RestartPreventExitStatus=") }
        XCTAssertEqual(lines.count, 1, unit)
        let statuses = Set(lines.first?.dropFirst("RestartPreventExitStatus=".count).split(separator: " ").map(String.init) ?? [])
        XCTAssertEqual(statuses, ["64", "78"])
    }

    func testWatchExplainsAMissingOrDeadSocket() throws {
        let dir = temporaryDirectory("watcherr")
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = dir.appendingPathComponent("none.sock").path
        let (status, _, err) = try runToEnd(["watch", "--socket", missing])
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(err.contains("no socket at \(missing)"), err)

        let stale = dir.appendingPathComponent("stale.sock").path
        makeStaleSocket(at: stale)
        let (status2, _, err2) = try runToEnd(["watch", "--socket", stale])
        XCTAssertNotEqual(status2, 0)
        XCTAssertTrue(err2.contains("nothing is listening"), err2)
    }
}
