import BearingModel
@testable import BearingConfig
@testable import BearingMarine
@testable import BearingMQTT
@testable import BearingDaemon
import BearingPublishing
import Foundation
import TestSupport
import XCTest

/// The `mqtt:` section's values that used to pass the check and fail later (or loop, or leak a password):
/// each is refused at config time with a clear error, and quoted in it without control characters.
final class MQTTConfigValidationTests: XCTestCase {
    func rejection(_ yaml: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            _ = try AgentConfig.parse(yaml: yaml, source: "bearing.yaml")
            XCTFail("accepted: \(yaml)", file: file, line: line)
            return ""
        } catch {
            return "\(error)"
        }
    }

    func assertRejected(_ yaml: String, mentions: [String], file: StaticString = #filePath, line: UInt = #line) {
        let text = rejection(yaml, file: file, line: line)
        for m in mentions { XCTAssertTrue(text.contains(m), "«\(text)» lacks «\(m)»", file: file, line: line) }
        XCTAssertFalse(text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
                       "a control character in «\(text.debugDescription)»", file: file, line: line)
    }

    func assertAccepted(_ yaml: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNoThrow(try AgentConfig.parse(yaml: yaml, source: "bearing.yaml"), yaml, file: file, line: line)
    }

    // MARK: Issue 40: the MQTT version

    /// `mqtt.protocol`: 5 by default (the broker is told the largest packet), 3.1.1 when set so; nothing else.
    func testTheProtocolKeyIsFiveOr311() throws {
        let base = "mqtt:\n  broker: mqtt://127.0.0.1:1883\n  device: p1\n"
        XCTAssertEqual(try AgentConfig.parse(yaml: base, source: "bearing.yaml").mqtt.protocolVersion, .v5)
        XCTAssertEqual(try AgentConfig.parse(yaml: base + "  protocol: 5\n", source: "bearing.yaml").mqtt.protocolVersion, .v5)
        XCTAssertEqual(try AgentConfig.parse(yaml: base + "  protocol: 3.1.1\n", source: "bearing.yaml").mqtt.protocolVersion, .v311)
        XCTAssertEqual(try AgentConfig.parse(yaml: base + "  protocol: \"3.1.1\"\n", source: "bearing.yaml").mqtt.protocolVersion, .v311)
        for bad in ["3", "3.1", "4", "5.0", "v5", "mqtt5"] {
            assertRejected(base + "  protocol: \(bad)\n", mentions: ["mqtt.protocol", "5 or 3.1.1"])
        }
    }

    /// The packet bound told to an MQTT 5 broker: a whole PUBLISH of the largest fleet message on the longest
    /// topic subscribed to, with room for the properties a publisher may add.
    func testThePacketBoundCoversTheLargestFleetMessageOnTheLongestTopic() {
        let topic = "bearing/fleet/pipelines"
        let bound = MQTTClient.publishPacketBound(payload: FleetPipelines.maxMessageBytes, topics: [topic, "homeassistant/status"])
        // 1 + 4 (fixed header) + 2 + 23 (topic) + 2 (packet id) + 4 (properties' length) + 1024 (properties) + 65,536.
        XCTAssertEqual(bound, 66_596)
        XCTAssertEqual(MQTTClient.publishPacketBound(payload: 10, topics: []), 1 + 4 + 2 + 2 + 4 + MQTTClient.propertyAllowance + 10)
        XCTAssertEqual(MQTTClient.connackCode311(132), 1)
        XCTAssertEqual(MQTTClient.connackCode311(134), 4)
        XCTAssertEqual(MQTTClient.connackCode311(135), 5)
        XCTAssertNil(MQTTClient.connackCode311(138))
    }

    // MARK: Item 2: a fleet topic the device publishes to

    /// Each topic the door publishes to, under the default prefix, its own prefix, and Home Assistant's.
    func testAFleetTopicTheDeviceItselfPublishesToIsRefused() {
        for own in ["pipelines/status", "status", "spool", "tpv", "att", "sky"] {
            assertRejected("mqtt:\n  device: dev1\n  fleet_topic: bearing/dev1/\(own)\n",
                           mentions: ["bearing.yaml:3", "mqtt.fleet_topic", "\"bearing/dev1/\(own)\"", "this device publishes to (bearing/dev1/\(own))"])
        }
        assertRejected("mqtt:\n  device: dev1\n  prefix: fleet/boat-7\n  fleet_topic: fleet/boat-7/pipelines/status\n",
                       mentions: ["mqtt.fleet_topic", "fleet/boat-7/pipelines/status"])
        assertRejected("mqtt:\n  device: dev1\n  home_assistant: true\n  fleet_topic: homeassistant/sensor/bearing_dev1/heading/config\n",
                       mentions: ["mqtt.fleet_topic", "homeassistant/sensor/bearing_dev1/heading/config"])
        assertRejected("mqtt:\n  device: dev1\n  home_assistant: {discovery_prefix: ha}\n  fleet_topic: ha/device_tracker/bearing_dev1/position/config\n",
                       mentions: ["mqtt.fleet_topic"])
        assertRejected("mqtt:\n  device: dev1\n  home_assistant: true\n  fleet_topic: bearing/dev1/position\n", mentions: ["mqtt.fleet_topic"])
        // The device's name from /etc/machine-id is not known yet: any device's.
        assertRejected("mqtt:\n  fleet_topic: bearing/0123456789ab/pipelines/status\n",
                       mentions: ["mqtt.fleet_topic", "bearing/+/pipelines/status", "this device's name"])
        assertRejected("mqtt:\n  home_assistant: true\n  fleet_topic: homeassistant/sensor/bearing_0123456789ab/roll/config\n", mentions: ["mqtt.fleet_topic"])
        // Wildcards are no fleet topic at all.
        assertRejected("mqtt:\n  fleet_topic: \"bearing/#\"\n", mentions: ["mqtt.fleet_topic", "without + or #"])
        assertRejected("mqtt:\n  fleet_topic: +/dev1/pipelines/status\n", mentions: ["mqtt.fleet_topic", "without + or #"])

        // Topics beside the device's own are fine; so is another prefix's status with a prefix set.
        assertAccepted("mqtt:\n  fleet_topic: bearing/fleet/pipelines\n")
        assertAccepted("mqtt:\n  device: dev1\n  home_assistant: true\n  fleet_topic: bearing/fleet/pipelines\n")
        assertAccepted("mqtt:\n  device: boat-7\n  fleet_topic: bearing/boat-7/pipelines\n")
        assertAccepted("mqtt:\n  fleet_topic: bearing/boat-7/pipelines\n")
        assertAccepted("mqtt:\n  device: dev1\n  prefix: fleet/boat-7\n  fleet_topic: bearing/dev1/pipelines/status\n")
        assertAccepted("mqtt:\n  device: dev1\n  fleet_topic: homeassistant/status\n")
    }

    /// The device's name from /etc/machine-id is known when the door opens: its own topics are refused then.
    func testTheDoorRefusesAFleetTopicItPublishesToWithTheDeviceFromTheMachineID() throws {
        let dir = temporaryDirectory("mqtt-own-fleet")
        defer { try? FileManager.default.removeItem(at: dir) }
        let machineID = dir.appendingPathComponent("machine-id")
        try "0123456789abcdef0123456789abcdef\n".write(to: machineID, atomically: true, encoding: .utf8)
        let device = try XCTUnwrap(DeviceIdentity(machineID: "0123456789abcdef0123456789abcdef")).device
        var config = makeAgentConfig(gpsdPort: 1, dir: dir)
        config.mqtt.spoolDirectory = dir.appendingPathComponent("spool").path
        config.mqtt.fleetTopic = "bearing/\(device)/pipelines/status"
        let core = PublishingCore(defaults: config.pipelines, release: Release.wireRelease)
        let broker = MQTTBroker(host: "127.0.0.1", port: freePort(), tls: false)
        XCTAssertThrowsError(try MQTTDoor(config.mqtt, broker: broker, core: core, logger: testLogger(), machineIDFile: machineID.path)) { error in
            XCTAssertTrue("\(error)".contains("mqtt.fleet_topic bearing/\(device)/pipelines/status: this device publishes to it"), "\(error)")
        }
        config.mqtt.fleetTopic = "bearing/fleet/pipelines"
        XCTAssertNoThrow(try MQTTDoor(config.mqtt, broker: broker, core: core, logger: testLogger(), machineIDFile: machineID.path).close())
    }

    // MARK: Item 7: strings handed to C

    func testTheClientIDIsPrintableASCIIWithoutNUL() {
        for bad in [#""a\x01b""#, #""a\x7fb""#, #""ab\0cd""#, #""a b""#, #""a\tb""#, #""""#, #""caf\u00e9""#, String(repeating: "x", count: 129)] {
            assertRejected("mqtt:\n  client_id: \(bad)\n", mentions: ["bearing.yaml:2", "mqtt.client_id", "1–128 printable ASCII characters"])
        }
        assertRejected("mqtt:\n  client_id: \"ab\\0cd\"\n", mentions: [#""ab\u0000cd""#])
        assertRejected("mqtt:\n  client_id: \"a\\x01b\"\n", mentions: [#""a\u0001b""#])
        for good in ["bearing-boat7", "a", "!~#+/x", String(repeating: "x", count: 128)] {
            XCTAssertEqual(try AgentConfig.parse(yaml: "mqtt:\n  client_id: '\(good)'\n").mqtt.clientID, good)
        }
    }

    func testOtherStringsForCHaveNoControlCharacters() {
        assertRejected("mqtt:\n  username: \"op\\0erator\"\n", mentions: ["mqtt.username", "without control characters"])
        assertRejected("mqtt:\n  username: \"op\\x1berator\"\n", mentions: ["mqtt.username"])
        assertAccepted("mqtt:\n  username: \"opérateur\"\n")
        assertRejected("mqtt:\n  prefix: \"bearing/a\\x01b\"\n", mentions: ["mqtt.prefix"])
        assertRejected("mqtt:\n  prefix: \"bearing/a\\0b\"\n", mentions: ["mqtt.prefix"])
        assertRejected("mqtt:\n  fleet_topic: \"bearing/fleet\\x7f\"\n", mentions: ["mqtt.fleet_topic"])
        assertRejected("mqtt:\n  home_assistant: {discovery_prefix: \"ha\\u0085\"}\n", mentions: ["mqtt.home_assistant.discovery_prefix"])
        assertRejected("mqtt:\n  password_file: \"/etc/bearing/pw\\0x\"\n", mentions: ["mqtt.password_file", "without control characters"])
        assertRejected("mqtt:\n  spool: {directory: \"/var/lib/bearing/sp\\nool\"}\n", mentions: ["mqtt.spool.directory"])
        assertRejected("mqtt:\n  tls: {ca: \"/etc/ca\\x01.pem\"}\n", mentions: ["mqtt.tls.ca"])
        assertRejected("mqtt:\n  broker: \"mqtt://bro\\0ker\"\n", mentions: ["mqtt.broker", "control character"])
        assertRejected("mqtt:\n  broker: \"mqtt://bro ker\"\n", mentions: ["mqtt.broker", "a space or control character in the host"])
    }

    /// The password file's first line goes to libmosquitto as a C string: a NUL in it stops the start.
    func testAPasswordWithANULIsRefusedWhenTheDoorOpens() throws {
        let dir = temporaryDirectory("mqtt-password-nul")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("password")
        try Data("ab\0cd\n".utf8).write(to: file)
        var config = makeAgentConfig(gpsdPort: 1, dir: dir)
        config.mqtt.device = "d1"
        config.mqtt.username = "u"
        config.mqtt.passwordFile = file.path
        config.mqtt.spoolDirectory = dir.appendingPathComponent("spool").path
        let core = PublishingCore(defaults: config.pipelines, release: Release.wireRelease)
        let broker = MQTTBroker(host: "127.0.0.1", port: freePort(), tls: false)
        XCTAssertThrowsError(try MQTTDoor(config.mqtt, broker: broker, core: core, logger: testLogger())) { error in
            XCTAssertEqual("\(error)", "mqtt.password_file \(file.path): the password has a NUL byte")
        }
        try Data("abcd\n".utf8).write(to: file)
        XCTAssertNoThrow(try MQTTDoor(config.mqtt, broker: broker, core: core, logger: testLogger()).close())
    }

    // MARK: Item 10: config errors

    /// The range the spool may have is the one the error names, from the same bounds (and the README's).
    func testTheSpoolBoundIs256KTo1GAndTheErrorSaysSo() {
        XCTAssertEqual(try AgentConfig.parse(yaml: "mqtt:\n  spool: {max_bytes: 1G}\n").mqtt.spoolMaxBytes, 1 << 30)
        XCTAssertEqual(try AgentConfig.parse(yaml: "mqtt:\n  spool: {max_bytes: 256K}\n").mqtt.spoolMaxBytes, 256 << 10)
        XCTAssertEqual(try AgentConfig.parse(yaml: "mqtt:\n  spool: {max_bytes: 1024M}\n").mqtt.spoolMaxBytes, 1 << 30)
        for bad in ["2G", "1024G", "1025M", "255K", "262143", "9223372036854775807K"] {
            assertRejected("mqtt:\n  spool: {max_bytes: \(bad)}\n", mentions: ["mqtt.spool.max_bytes", "\"\(bad)\"", "a size from 256K to 1G"])
        }
        XCTAssertEqual(ConfigReader.sizeText(256 << 10), "256K")
        XCTAssertEqual(ConfigReader.sizeText(1 << 30), "1G")
        XCTAssertEqual(ConfigReader.sizeText(1536 << 20), "1536M")
        XCTAssertEqual(ConfigReader.sizeText(1000), "1000")
    }

    /// Every boolean key's error names true and false.
    func testBooleanKeysNameTrueAndFalse() {
        assertRejected("mqtt:\n  home_assistant: maybe\n", mentions: ["mqtt.home_assistant", "\"maybe\"", "true, false", "mapping"])
        assertRejected("mqtt:\n  fleet_topic: f/p\n  fleet_named_pipelines: sometimes\n", mentions: ["mqtt.fleet_named_pipelines", "true or false"])
        assertRejected("mqtt:\n  topics: {att: maybe}\n", mentions: ["mqtt.topics.att", "true", "false"])
        // The NMEA door's sentences take the same three forms, with the same rule and words.
        assertRejected("nmea0183:\n  tcp: 127.0.0.1:61110\n  sentences: {hdt: maybe}\n",
                       mentions: ["nmea0183.sentences.hdt", "\"maybe\"", "true, false or an operator list"])
        XCTAssertNil(try AgentConfig.parse(yaml: "nmea0183:\n  tcp: 127.0.0.1:61110\n  sentences: {hdt: false}\n").nmea0183.sentences[.hdt])
        XCTAssertNotNil(try AgentConfig.parse(yaml: "nmea0183:\n  tcp: 127.0.0.1:61110\n  sentences: {rmc: true}\n").nmea0183.sentences[.rmc])
        XCTAssertEqual(try AgentConfig.parse(yaml: "mqtt:\n  home_assistant: off\n").mqtt.homeAssistant, nil)
        XCTAssertEqual(try AgentConfig.parse(yaml: "mqtt:\n  home_assistant: yes\n").mqtt.homeAssistant, "homeassistant")
    }

    func testABrokerWithoutAHostSaysSo() {
        for url in ["mqtt://", "mqtts://", "mqtt:///", "mqtt://:1883", "mqtts://[]:8883"] {
            assertRejected("mqtt:\n  broker: \"\(url)\"\n", mentions: ["mqtt.broker", "no host"])
            XCTAssertFalse(rejection("mqtt:\n  broker: \"\(url)\"\n").contains("user and password"), url)
        }
    }

    /// A URL with a user and password is refused without echoing them (the password never; the user either).
    func testABrokerURLsPasswordIsNeverEchoed() {
        for url in ["mqtt://op:s3cret@broker.example.net", "mqtts://op:s3cret@broker.example.net:8883/", "http://op:s3cret@broker.example.net",
                    "mqtt://op:s3cret@", "mqtt://op:s3cret@host/path", "op:s3cret@broker", "mqtt://op:s3c@ret@host", "mqtt://op:s3cret@host:99999"] {
            let text = rejection("mqtt:\n  broker: \"\(url)\"\n")
            XCTAssertTrue(text.contains("mqtt.broker"), text)
            XCTAssertFalse(text.contains("s3c") || text.contains("ret@") || text.contains("op:"), "«\(text)» echoes the user or password of \(url)")
        }
        XCTAssertTrue(rejection("mqtt:\n  broker: mqtt://op:s3cret@broker.example.net\n").contains(#""mqtt://***@broker.example.net""#))
        XCTAssertTrue(rejection("mqtt:\n  broker: mqtt://op:s3cret@broker.example.net\n").contains("user and password go in mqtt.username and mqtt.password_file"))
        XCTAssertEqual(MQTTBroker.shown("mqtt://broker.example.net:1883"), "mqtt://broker.example.net:1883")
        XCTAssertEqual(MQTTBroker.shown("mqtts://u@h/x@y"), "mqtts://***@h/x@y")
    }

    // MARK: Item 3: the saved fleet message

    /// The saved copy is read with the bound a fleet message has: one the broker could not have sent is not used.
    func testTheSavedFleetMessageIsReadWithinTheMessageBound() throws {
        let dir = temporaryDirectory("mqtt-fleet-file")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("fleet.json")
        func save(size: Int) throws {
            let body = #"{"version":"v1","mqtt":{"ATT":[{"op":"throttle","interval":5}]}}"#
            try Data((body + String(repeating: " ", count: size - body.utf8.count)).utf8).write(to: file)
        }
        try save(size: FleetPipelines.maxMessageBytes)
        XCTAssertEqual(MQTTDoor.loadFleet(file.path, logger: testLogger())?.update?.version, "v1")
        try save(size: FleetPipelines.maxMessageBytes + 1)
        XCTAssertNil(MQTTDoor.loadFleet(file.path, logger: testLogger()))
        try save(size: 100 << 10)
        XCTAssertNil(MQTTDoor.loadFleet(file.path, logger: testLogger()))
    }

    // MARK: Item 12: wording

    /// libmosquitto's end of stream: MOSQ_ERR_CONN_LOST (7) between packets, MOSQ_ERR_ERRNO (14) with errno 0
    /// (strerror's "Success") within one.
    func testTheReasonAConnectionEndedIsWords() {
        XCTAssertEqual(MQTTError.reason(14, errno: 0), "the broker closed the connection")
        XCTAssertEqual(MQTTError.reason(7, errno: 0), "the broker closed the connection")
        XCTAssertEqual(MQTTError.reason(7, errno: ECONNRESET), "the connection was reset")
        XCTAssertEqual(MQTTError.reason(14, errno: ECONNREFUSED), "Connection refused")
        XCTAssertEqual(MQTTError.reason(2, errno: 0), "A network protocol error occurred when communicating with the broker")
    }

    func testWhatStaysInForceAgrees() {
        XCTAssertEqual(MQTTOutbox.inForce("v1"), "version v1 stays in force")
        XCTAssertEqual(MQTTOutbox.inForce(nil), "the config's chains stay in force")
    }
}
