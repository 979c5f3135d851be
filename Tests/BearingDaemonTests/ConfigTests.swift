import BearingModel
import BearingCalibration
import BearingPOSIX
import BearingMarine
import BearingMQTT
import BearingDaemon
import BearingPublishing
import Foundation
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
        // The web door is on, with its defaults (it is off without the section).
        XCTAssertTrue(parsed.web.enabled)
        parsed.web.enabled = false
        XCTAssertEqual(parsed, AgentConfig())
    }

    /// The commented `mqtt:` block, uncommented, is the door's defaults with a broker.
    func testTheShippedMQTTBlockIsTheDefaults() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("systemd/bearing.yaml")
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let start = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("# mqtt:") })
        let block = lines[start...].prefix { $0.hasPrefix("# ") }.map { $0.dropFirst(2) }.filter { !$0.trimmingWhitespace().hasPrefix("#") }
        let parsed = try AgentConfig.parse(yaml: block.joined(separator: "\n"), source: "bearing.yaml")
        var expected = MQTTDoorConfig()
        expected.broker = MQTTBroker(host: "broker.fleet.example", port: 1883, tls: false)
        XCTAssertEqual(parsed.mqtt, expected)
    }
}

/// The doors' config: outputs, talker, per-sentence chains, and errors that name the key and line.
extension ConfigTests {
    func testDoorsAreOffByDefaultAndEveryKeyIsRead() throws {
        XCTAssertTrue(AgentConfig().nmea0183.outputs.isEmpty)
        XCTAssertTrue(AgentConfig().signalK.outputs.isEmpty)
        let c = try AgentConfig.parse(yaml: """
            nmea0183:
              tcp: [127.0.0.1:61110, "[::1]:61110"]
              udp: 192.168.1.255:10110
              max_clients: 4
              client_queue: 16
              talker: ii
              sentences:
                hdt: [{op: deadband, degrees: 0.5, heartbeat: 1}]
                hdg: false
                rmc: true
                xdr: [{op: throttle, interval: 1}]
            signalk:
              udp: 127.0.0.1:8375
              source: mast-pi
              attitude: [{op: throttle, interval: 1}]
            """, source: "bearing.yaml")
        let n = c.nmea0183
        XCTAssertEqual(n.outputs.tcp, [.init(host: "127.0.0.1", port: 61110), .init(host: "::1", port: 61110)])
        XCTAssertEqual(n.outputs.udp, [.init(host: "192.168.1.255", port: 10110)])
        XCTAssertEqual(n.outputs.maxClients, 4)
        XCTAssertEqual(n.outputs.clientQueue, 16)
        XCTAssertEqual(n.talker, "II")
        XCTAssertEqual(n.sentences[.hdt], [.deadband(.init(.degrees(0.5), heartbeat: 1))])
        XCTAssertNil(n.sentences[.hdg], "hdg: false turns it off")
        XCTAssertEqual(n.sentences[.hdm], NMEA0183DoorConfig.defaultSentences[.hdm], "untouched sentences keep their default")
        XCTAssertEqual(n.sentences[.rmc], [.throttle(interval: 1, latest: true)], "rmc: true turns it on at 1 Hz")
        XCTAssertEqual(n.sentences[.xdr], [.throttle(interval: 1, latest: true)])
        XCTAssertEqual(n.echoGuard.tcp.count, 2)
        XCTAssertEqual(c.signalK.outputs.udp, [.init(host: "127.0.0.1", port: 8375)])
        XCTAssertEqual(c.signalK.source, "mast-pi")
        XCTAssertEqual(c.signalK.attitude, [.throttle(interval: 1, latest: true)])
        XCTAssertEqual(c.signalK.fix, SignalKDoorConfig().fix)
    }

    func testBadDoorValuesAreNamed() {
        assertRejected("nmea0183:\n  tcp: 192.168.1.7:61110\n", mentions: ["bearing.yaml:2", "nmea0183.tcp", "not a loopback address", "nmea0183.allow_remote: true"])
        assertRejected("nmea0183:\n  tcp: localhost:61110\n", mentions: ["bearing.yaml:2", "nmea0183.tcp", "numeric"])
        assertRejected("nmea0183:\n  udp: 10.0.0.255\n", mentions: ["nmea0183.udp", "HOST:PORT"])
        assertRejected("nmea0183:\n  talker: H1\n", mentions: ["nmea0183.talker", "\"H1\"", "two letters"])
        assertRejected("nmea0183:\n  sentences:\n    vhw: true\n", mentions: ["unknown key \"nmea0183.sentences.vhw\"", "hdt"])
        assertRejected("nmea0183:\n  sentences:\n    hdt: [{op: min_mode, mode: 2}]\n", mentions: ["nmea0183.sentences.hdt", "does not apply to ATT"])
        assertRejected("nmea0183:\n  tpc: 127.0.0.1:1\n", mentions: ["unknown key \"nmea0183.tpc\"", "tcp"])
        assertRejected("signalk:\n  source: \"a b\"\n", mentions: ["signalk.source", "\"a b\""])
        assertRejected("signalk:\n  fix: [{op: smooth, samples: 3}]\n", mentions: ["signalk.fix", "does not apply to TPV"])
    }

    func testTheMQTTDoorIsOffByDefaultAndEveryKeyIsRead() throws {
        XCTAssertNil(AgentConfig().mqtt.broker)
        let c = try AgentConfig.parse(yaml: """
            mqtt:
              broker: mqtts://broker.example.org
              device: boat-7
              client_id: boat-7-bearing
              prefix: fleet/north/boat-7
              username: boat7
              password_file: /etc/bearing/mqtt-password
              tls: {ca: /etc/ssl/fleet-ca.pem, certificate: /etc/bearing/boat7.pem, key: /etc/bearing/boat7.key}
              keepalive: 30
              window: 8
              retry_initial: 2
              retry_max: 300
              topics:
                tpv: [{op: throttle, interval: 10}]
                sky: false
              spool: {directory: /var/lib/bearing/spool, max_bytes: 64M}
            """, source: "bearing.yaml")
        let m = c.mqtt
        XCTAssertEqual(m.broker, MQTTBroker(host: "broker.example.org", port: 8883, tls: true))
        XCTAssertEqual(m.device, "boat-7")
        XCTAssertEqual(m.clientID, "boat-7-bearing")
        XCTAssertEqual(m.prefix, "fleet/north/boat-7")
        XCTAssertEqual(m.username, "boat7")
        XCTAssertEqual(m.passwordFile, "/etc/bearing/mqtt-password")
        XCTAssertEqual(m.caFile, "/etc/ssl/fleet-ca.pem")
        XCTAssertEqual(m.certificateFile, "/etc/bearing/boat7.pem")
        XCTAssertEqual(m.keyFile, "/etc/bearing/boat7.key")
        XCTAssertEqual(m.keepalive, 30)
        XCTAssertEqual(m.window, 8)
        XCTAssertEqual(m.retryInitial, 2)
        XCTAssertEqual(m.retryMax, 300)
        XCTAssertEqual(m.topics[.tpv], [.throttle(interval: 10, latest: true)])
        XCTAssertEqual(m.topics[.att], MQTTDoorConfig.defaultTopics[.att], "untouched topics keep their default")
        XCTAssertNil(m.topics[.sky])
        XCTAssertEqual(m.spoolDirectory, "/var/lib/bearing/spool")
        XCTAssertEqual(m.spoolMaxBytes, 64 << 20)
        XCTAssertNil(m.homeAssistant, "Home Assistant discovery is off by default")
        XCTAssertNil(m.fleetTopic, "only the config sets chains by default")
        XCTAssertEqual(try AgentConfig.parse(yaml: "mqtt:\n  fleet_topic: bearing/fleet/pipelines\n").mqtt.fleetTopic, "bearing/fleet/pipelines")
        XCTAssertFalse(m.fleetNamedPipelines, "the fleet sets the socket's named pipelines only when allowed")
        XCTAssertTrue(try AgentConfig.parse(yaml: "mqtt:\n  fleet_topic: f/p\n  fleet_named_pipelines: true\n").mqtt.fleetNamedPipelines)
        XCTAssertEqual(try AgentConfig.parse(yaml: "mqtt:\n  home_assistant: true\n").mqtt.homeAssistant, "homeassistant")
        XCTAssertEqual(try AgentConfig.parse(yaml: "mqtt:\n  home_assistant: {discovery_prefix: ha}\n").mqtt.homeAssistant, "ha")
        XCTAssertEqual(MQTTBroker.parse("mqtt://[::1]:1884"), .success(MQTTBroker(host: "::1", port: 1884, tls: false)))
        XCTAssertEqual(MQTTBroker.parse("mqtt://10.0.0.2"), .success(MQTTBroker(host: "10.0.0.2", port: 1883, tls: false)))
        XCTAssertEqual("\(MQTTBroker(host: "::1", port: 1884, tls: true))", "mqtts://[::1]:1884")
    }

    func testBadMQTTValuesAreNamed() {
        assertRejected("mqtt:\n  broker: http://x\n", mentions: ["bearing.yaml:2", "mqtt.broker", "not mqtt://HOST[:PORT]"])
        assertRejected("mqtt:\n  broker: mqtt://user:pw@host\n", mentions: ["mqtt.broker", "mqtt.password_file"])
        assertRejected("mqtt:\n  broker: mqtt://host:99999\n", mentions: ["mqtt.broker", "not 1–65535"])
        assertRejected("mqtt:\n  prefix: bearing/#\n", mentions: ["mqtt.prefix", "without + or #"])
        assertRejected("mqtt:\n  prefix: /bearing\n", mentions: ["mqtt.prefix", "not starting or ending with /"])
        assertRejected("mqtt:\n  device: \"a b\"\n", mentions: ["mqtt.device", "\"a b\""])
        assertRejected("mqtt:\n  spool: {max_bytes: 10}\n", mentions: ["mqtt.spool.max_bytes", "\"10\"", "256K"])
        assertRejected("mqtt:\n  spool: {max_bytes: 12Q}\n", mentions: ["mqtt.spool.max_bytes", "with K, M or G"])
        assertRejected("mqtt:\n  topics:\n    gst: true\n", mentions: ["unknown key \"mqtt.topics.gst\"", "att, sky, tpv"])
        assertRejected("mqtt:\n  topics:\n    att: [{op: min_mode, mode: 2}]\n", mentions: ["mqtt.topics.att", "does not apply to ATT"])
        assertRejected("mqtt:\n  broker: mqtts://h\n  tls: {certificate: /c.pem}\n", mentions: ["mqtt.tls", "needs its key"])
        assertRejected("mqtt:\n  broker: mqtt://h\n  tls: {ca: /ca.pem}\n", mentions: ["mqtt.tls is set but mqtt.broker is mqtt://"])
        assertRejected("mqtt:\n  password_file: /p\n", mentions: ["mqtt.password_file needs mqtt.username"])
        assertRejected("mqtt:\n  home_assistant: {discovery_prefix: \"ha/#\"}\n", mentions: ["mqtt.home_assistant.discovery_prefix", "without + or #"])
        assertRejected("mqtt:\n  home_assistant: maybe\n", mentions: ["mqtt.home_assistant", "mapping"])
        assertRejected("mqtt:\n  fleet_topic: bearing/+/pipelines\n", mentions: ["mqtt.fleet_topic", "without + or #"])
        assertRejected("mqtt:\n  fleet_named_pipelines: true\n", mentions: ["mqtt.fleet_named_pipelines needs mqtt.fleet_topic"])
        assertRejected("mqtt:\n  fleet_topic: f/p\n  fleet_named_pipelines: sometimes\n", mentions: ["bearing.yaml:3", "mqtt.fleet_named_pipelines"])
        assertRejected("mqtt:\n  retry_initial: 10\n  retry_max: 1\n", mentions: ["mqtt.retry_max (1.0) must be ≥ mqtt.retry_initial (10.0)"])
    }

    /// A password file that cannot be read stops the start and is named; the password never is.
    func testTheMQTTDoorNamesAMissingPasswordFileAndAnUnnamedDevice() throws {
        let dir = temporaryDirectory("mqtt-open")
        defer { try? FileManager.default.removeItem(at: dir) }
        var config = makeAgentConfig(gpsdPort: 1, dir: dir)
        config.mqtt.broker = MQTTBroker(host: "127.0.0.1", port: freePort(), tls: false)
        config.mqtt.device = "d1"
        config.mqtt.username = "u"
        config.mqtt.passwordFile = dir.appendingPathComponent("nope").path
        config.mqtt.spoolDirectory = dir.appendingPathComponent("spool").path
        let core = PublishingCore(defaults: config.pipelines, release: Release.wireRelease)
        XCTAssertThrowsError(try Doors.open(config, core: core, requests: .init(), logger: testLogger())) { error in
            XCTAssertTrue("\(error)".contains("mqtt.password_file \(dir.path)/nope: No such file or directory"), "\(error)")
        }
        config.mqtt.passwordFile = nil
        config.mqtt.spoolDirectory = dir.appendingPathComponent("nope/spool").path
        try Data().write(to: dir.appendingPathComponent("nope"))
        XCTAssertThrowsError(try Doors.open(config, core: core, requests: .init(), logger: testLogger())) { error in
            XCTAssertTrue("\(error)".contains("mqtt.spool.directory \(dir.path)/nope/spool"), "\(error)")
        }
    }

    /// A port in use stops the start with an error that names the port and who usually holds it.
    func testAPortInUseIsNamedWithItsUsualHolder() throws {
        let taken = try TCPSocket.listen(host: "127.0.0.1", port: 0)
        defer { close(taken) }
        let port = try XCTUnwrap(TCPSocket.boundPort(taken))
        var config = makeAgentConfig(gpsdPort: 1, dir: temporaryDirectory("door-port"))
        config.nmea0183.outputs.tcp = [.init(host: "127.0.0.1", port: port)]
        let core = PublishingCore(defaults: config.pipelines, release: Release.wireRelease)
        XCTAssertThrowsError(try Doors.open(config, core: core, requests: .init(), logger: testLogger())) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("nmea0183.tcp 127.0.0.1:\(port): the port is in use"), text)
            XCTAssertTrue(text.contains("ss -ltnp"), text)
        }
        XCTAssertEqual(WellKnownPorts.holder(10110).map { $0.contains("Signal K server") }, true)
        // The door's other listener, opened before the failing one, is closed again.
        let free = freePort()
        config.nmea0183.outputs.tcp = [.init(host: "127.0.0.1", port: free), .init(host: "127.0.0.1", port: port)]
        XCTAssertThrowsError(try Doors.open(config, core: core, requests: .init(), logger: testLogger()))
        XCTAssertNoThrow(try { let fd = try TCPSocket.listen(host: "127.0.0.1", port: free); close(fd) }(), "port \(free) was left open")
    }
}

/// A replay of a recording runs the recorded config with every door off but the socket (moved into its own
/// directory): the recorded board's service is most likely running, and holds those ports.
final class ReplayConfigTests: XCTestCase {
    func testARecordedConfigKeepsToTheReplayingProcess() throws {
        var c = try AgentConfig.parse(yaml: """
            socket: {tcp: "127.0.0.1:2948"}
            nmea0183: {tcp: "127.0.0.1:10110"}
            signalk: {udp: "127.0.0.1:8375"}
            mqtt: {broker: "mqtt://127.0.0.1:1883"}
            web: {port: 8074}
            log: {data_log: /var/log/bearing/data.ndjson}
            """, source: "recorded.yaml")
        c.keepToThisProcess(in: "/tmp/replay-x")
        XCTAssertEqual(c.socket.path, "/tmp/replay-x/bearing.sock")
        XCTAssertNil(c.socket.tcp)
        XCTAssertEqual(c.nmea0183, AgentConfig().nmea0183)
        XCTAssertEqual(c.signalK, AgentConfig().signalK)
        XCTAssertEqual(c.mqtt, AgentConfig().mqtt)
        XCTAssertFalse(c.web.enabled, "a replay opened the recorded board's web port")
        XCTAssertNil(c.log.dataLog)
    }
}
