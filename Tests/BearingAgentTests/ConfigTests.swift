import BearingAgent
import Foundation
import BearingCore
import TestSupport
import XCTest

final class ConfigTests: XCTestCase {
    func testEmptyFileGivesDefaults() throws {
        let c = try AgentConfig.parse(yaml: "# nothing but a comment\n")
        XCTAssertEqual(c, AgentConfig())
        XCTAssertEqual(c.gpsd.port, 2947)
        XCTAssertEqual(c.tpvPipeline, AgentConfig.defaultTPVPipeline)
    }

    func testEveryKey() throws {
        let yaml = """
        gpsd:
          host: gps.local     # a comment
          port: 2948
          silence_timeout: 10
          retry_initial: 0.2
          retry_max: 3
        socket:
          path: /tmp/b.sock
          mode: "0600"
          max_clients: 8
          client_queue: 32
          write_interval: 0.05
        pipeline:
          tpv:
            - {op: min_mode, mode: 3}
            - {op: throttle, interval: 0.5, latest: false}
          sky: []
        log:
          level: debug
          data_log: /var/log/bearing/data.ndjson
        """
        let c = try AgentConfig.parse(yaml: yaml)
        XCTAssertEqual(c.gpsd.host, "gps.local")
        XCTAssertEqual(c.gpsd.port, 2948)
        XCTAssertEqual(c.gpsd.silenceTimeout, 10)
        XCTAssertEqual(c.gpsd.retryInitial, 0.2)
        XCTAssertEqual(c.gpsd.retryMax, 3)
        XCTAssertEqual(c.socket.path, "/tmp/b.sock")
        XCTAssertEqual(c.socket.mode, 0o600)
        XCTAssertEqual(c.socket.maxClients, 8)
        XCTAssertEqual(c.socket.clientQueue, 32)
        XCTAssertEqual(c.socket.writeInterval, 0.05)
        XCTAssertEqual(c.tpvPipeline, [.minMode(.threeD), .throttle(interval: 0.5, latest: false)])
        XCTAssertEqual(c.skyPipeline, [])
        XCTAssertEqual(c.log.level, .debug)
        XCTAssertEqual(c.log.dataLog, "/var/log/bearing/data.ndjson")
    }

    func assertRejected(_ yaml: String, mentions: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try AgentConfig.parse(yaml: yaml, source: "bearing.yaml"), file: file, line: line) { error in
            let text = "\(error)"
            for m in mentions { XCTAssertTrue(text.contains(m), "«\(text)» lacks «\(m)»", file: file, line: line) }
        }
    }

    func testUnknownKeysAndBadValuesAreNamed() {
        assertRejected("gpsd:\n  hots: x\n", mentions: ["bearing.yaml:2", "unknown key \"gpsd.hots\"", "host"])
        assertRejected("gspd:\n  host: x\n", mentions: ["unknown key \"gspd\"", "gpsd"])
        assertRejected("gpsd:\n  port: 70000\n", mentions: ["gpsd.port", "\"70000\"", "1 to 65535"])
        assertRejected("gpsd:\n  port: abc\n", mentions: ["gpsd.port", "\"abc\""])
        assertRejected("gpsd:\n  silence_timeout: 0\n", mentions: ["gpsd.silence_timeout", "\"0\""])
        assertRejected("socket:\n  mode: \"0999\"\n", mentions: ["socket.mode", "\"0999\"", "octal"])
        assertRejected("socket:\n  path: relative.sock\n", mentions: ["socket.path", "absolute path"])
        assertRejected("socket:\n  write_interval: 2\n", mentions: ["socket.write_interval", "2"])
        assertRejected("log:\n  level: loud\n", mentions: ["log.level", "\"loud\"", "debug"])
        assertRejected("pipeline:\n  tpv:\n    - {op: throttle, interval: fast}\n", mentions: ["pipeline.tpv[0] (throttle).interval", "fast"])
        assertRejected("pipeline:\n  sky:\n    - {op: min_mode, mode: 2}\n", mentions: ["pipeline.sky", "does not apply to SKY"])
        assertRejected("gpsd:\n  retry_initial: 1\n  retry_max: 0.5\n", mentions: ["retry_max"])
        assertRejected("gpsd: [1, 2]\n", mentions: ["gpsd must be a mapping"])
        assertRejected("gpsd:\n  host: [a\n", mentions: ["not valid YAML"])
    }

    func testCalibrationFileFollowsSystemdStateDirectory() throws {
        XCTAssertEqual(AgentConfig.defaultCalibrationPath(environment: ["STATE_DIRECTORY": "/var/lib/bearing"]), "/var/lib/bearing/calibration.json")
        XCTAssertEqual(AgentConfig.defaultCalibrationPath(environment: [:]), "/var/lib/bearing/calibration.json")
        XCTAssertEqual(AgentConfig.defaultCalibrationPath(environment: ["STATE_DIRECTORY": "/srv/a:/srv/b"]), "/srv/a/calibration.json")
        let c = try AgentConfig.parse(yaml: "magnetometer:\n  calibration: /etc/bearing/cal.json\n")
        XCTAssertEqual(c.calibrationPath, "/etc/bearing/cal.json")
    }

    func testDefaultSocketPathFollowsSystemd() {
        XCTAssertEqual(AgentConfig.defaultSocketPath(environment: ["RUNTIME_DIRECTORY": "/run/bearing"]), "/run/bearing/bearing.sock")
        XCTAssertEqual(AgentConfig.defaultSocketPath(environment: [:]), "/run/bearing/bearing.sock")
        XCTAssertEqual(AgentConfig.defaultSocketPath(environment: ["RUNTIME_DIRECTORY": "/run/x:/run/y"]), "/run/x/bearing.sock")
    }
}

final class ShippedConfigTests: XCTestCase {
    /// The example config shipped for systemd parses, and its documented defaults are the real ones.
    func testShippedExampleMatchesDefaults() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("systemd/bearing.yaml")
        var parsed = try AgentConfig.load(file: url.path)
        XCTAssertEqual(parsed.log.dataLog, "/var/log/bearing/data.ndjson")
        parsed.log.dataLog = nil
        XCTAssertEqual(parsed, AgentConfig())
    }
}
