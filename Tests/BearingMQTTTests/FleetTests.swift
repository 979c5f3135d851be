import BearingModel
import BearingWire
import BearingMQTT
import BearingDaemon
import Foundation
import XCTest

/// The pure parts of the MQTT door: spool lines, CRC-32, SHA-256/HMAC, the device id, numbering.
final class FleetTests: XCTestCase {
    func testCRC32IsZlibs() {
        XCTAssertEqual(CRC32.hex(CRC32.checksum(Array("123456789".utf8))), "cbf43926") // the standard check value
        XCTAssertEqual(CRC32.hex(CRC32.checksum([])), "00000000")
        XCTAssertEqual(CRC32.hex(CRC32.checksum(Array("The quick brown fox jumps over the lazy dog".utf8))), "414fa339")
    }

    func testSpoolRecordsRoundTripAndEveryFaultIsNamed() throws {
        let r = SpoolRecord(seq: 42, topic: "bearing/x/att", payload: #"{"class":"ATT","seq":42,"heading":12.5}"#)
        let line = r.line
        XCTAssertEqual(line.last, UInt8(ascii: "\n"))
        let body = "42\tbearing/x/att\t" + r.payload
        XCTAssertEqual(line, Array((body + "\t" + CRC32.hex(CRC32.checksum(Array(body.utf8))) + "\n").utf8), "SEQ, TOPIC, PAYLOAD, CRC of the three")
        XCTAssertEqual(try SpoolRecord.parse(line.dropLast()).get(), r)

        var flipped = line
        flipped[20] ^= 0x01
        guard case .failure(.checksum) = SpoolRecord.parse(flipped.dropLast()) else { return XCTFail("a flipped bit is caught") }
        guard case .failure(.fields(3)) = SpoolRecord.parse(Array("1\ta\tb".utf8)) else { return XCTFail("missing field") }
        let badSeq = Array("x1\tt\tp".utf8)
        let withCRC = badSeq + Array("\t\(CRC32.hex(CRC32.checksum(badSeq)))".utf8)
        guard case .failure(.sequence("x1")) = SpoolRecord.parse(withCRC) else { return XCTFail("bad number") }
        XCTAssertTrue(SpoolRecord.Fault.checksum(expected: "1", found: "2").description.contains("CRC-32 2 does not match"))
        XCTAssertFalse(SpoolRecord.fits("a\tb"))
        XCTAssertFalse(SpoolRecord.fits("a\nb"))
        XCTAssertTrue(SpoolRecord.fits(#"{"a":"\t"}"#))
    }

    func testSHA256AndHMACMatchTheStandardVectors() {
        func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }
        XCTAssertEqual(hex(SHA256.hash(Array("abc".utf8))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(hex(SHA256.hash([])), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        // FIPS 180-2 example 2 (two blocks) and a million a's.
        XCTAssertEqual(hex(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(hex(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))),
                       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        // RFC 4231 test cases 1 and 2.
        XCTAssertEqual(hex(SHA256.hmac(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8))),
                       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        XCTAssertEqual(hex(SHA256.hmac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))),
                       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    /// The id is systemd's own app-specific machine id: compared with `systemd-id128` for this machine.
    func testTheDeviceIDIsSystemdsAppSpecificIDAndHidesTheMachineID() throws {
        guard let machineID = try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8), !machineID.isEmpty else {
            throw XCTSkip("SKIPPED: /etc/machine-id is empty or missing here")
        }
        let identity = try XCTUnwrap(DeviceIdentity(machineID: machineID))
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-id128") else {
            throw XCTSkip("SKIPPED: /usr/bin/systemd-id128 missing")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-id128")
        p.arguments = ["machine-id", "--app-specific=\(DeviceIdentity.applicationID)"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        p.waitUntilExit()
        XCTAssertEqual(identity.appSpecificID, printed)
        XCTAssertEqual(identity.device.count, 12)
        XCTAssertEqual(identity.clientID, "bearing-\(identity.device)")
        XCTAssertFalse(machineID.contains(identity.device))
    }

    func testTheDeviceIDIsStableAndRefusesWhatIsNotAMachineID() throws {
        let a = try XCTUnwrap(DeviceIdentity(machineID: "3d1219c7c4c5404aaa1f6d2a48adfda4\n"))
        XCTAssertEqual(a, DeviceIdentity(machineID: "3d1219c7c4c5404aaa1f6d2a48adfda4"))
        XCTAssertNotEqual(a, DeviceIdentity(machineID: "3d1219c7c4c5404aaa1f6d2a48adfda5"))
        XCTAssertNil(DeviceIdentity(machineID: ""))
        XCTAssertNil(DeviceIdentity(machineID: "uninitialized"))
        XCTAssertNil(DeviceIdentity(machineID: "3d1219c7c4c5404aaa1f6d2a48adfd"))
    }

    func testTheEncoderWritesSeqAfterTheClass() throws {
        let a = Attitude(time: GPSTimestamp(seconds: 1_700_000_000), device: "x", heading: 1.5, magneticHeading: 1.5,
                         field: Vector3(1, 2, 3), dip: 60, magStatus: "ok", declination: nil, declinationSource: nil)
        let report = Report(.attitude(a))
        let numbered = report.line(seq: 7)
        XCTAssertTrue(numbered.hasPrefix(#"{"class":"ATT","seq":7,"device":"x","#), numbered)
        // The same object as the socket's line, with seq added and nothing else changed; the cached line has none.
        XCTAssertEqual(numbered.replacingOccurrences(of: #","seq":7"#, with: ""), report.line)
        XCTAssertFalse(report.line.contains("seq"))
        // A `fields` projection keeps seq and class.
        XCTAssertTrue(report.keeping(["heading"]).line(seq: 1).hasPrefix(#"{"class":"ATT","seq":1,"heading":1.50"#))
        let m = try WireMessage(line: report.line(seq: 123_456_789_012))
        XCTAssertEqual(m.number("seq"), 123_456_789_012)
        XCTAssertEqual(m.number("heading"), 1.5)
        // gpsd's own objects are written again from their fields, seq after class (and an old seq replaced).
        let relayed = try XCTUnwrap(RelayedObject(line: #"{"class":"ATT","seq":3,"device":"/dev/ttyS0","heading":12.5}"#))
        XCTAssertEqual(WireEncoding.relayed(relayed, keep: nil, seq: 1), #"{"class":"ATT","seq":1,"device":"/dev/ttyS0","heading":12.5}"#)
        XCTAssertEqual(WireEncoding.relayed(relayed, keep: nil), relayed.line)
        XCTAssertTrue(WireEncoding.spool(pending: 3, bytes: 900, bound: 1024, dropped: 2, unconfirmed: 1, nextSeq: 10)
            .hasPrefix(#"{"class":"SPOOL","pending":3,"bytes":900,"bound":1024,"dropped":2,"unconfirmed":1,"next_seq":10"#))
    }

    func testFleetPipelinesAreCheckedLikeAPipelineRequestAndEveryRefusalIsNamed() throws {
        let classes: Set<StreamClass> = [.tpv, .att, .sky]
        func parse(_ text: String) -> Result<FleetPipelines?, FleetPipelines.Refusal> { FleetPipelines.parse(Array(text.utf8), classes: classes) }
        let ok = try parse(#"{"version":"v7","mqtt":{"TPV":[{"op":"throttle","interval":60}],"ATT":[]}}"#).get()
        XCTAssertEqual(ok, FleetPipelines(version: "v7", mqtt: [.tpv: [.throttle(interval: 60, latest: true)], .att: []]))
        XCTAssertNil(try parse("").get(), "an empty payload goes back to the config")
        func refused(_ text: String, _ phrases: [String], version: String?, line: UInt = #line) {
            guard case .failure(let r) = parse(text) else { return XCTFail("accepted: \(text)", line: line) }
            for p in phrases { XCTAssertTrue(r.message.contains(p), "\(r.message) lacks \(p)", line: line) }
            XCTAssertEqual(r.version, version, line: line)
        }
        refused("{", ["not JSON"], version: nil)
        refused("[1]", ["not a JSON object"], version: nil)
        refused(#"{"mqtt":{}}"#, ["\"version\" is required"], version: nil)
        refused(#"{"version":"a b","mqtt":{}}"#, ["\"version\" is required"], version: "a b")
        refused(#"{"version":"v1"}"#, ["fleet pipelines \"v1\"", "\"mqtt\" (chains by class", "or \"pipelines\" (named pipelines) is required"], version: "v1")
        refused(#"{"version":"v1","mqtt":{},"socket":{}}"#, ["unknown key \"socket\""], version: "v1")
        refused(#"{"version":"v1","mqtt":{"ATT":[{"op":"min_mode","mode":2}]}}"#, ["mqtt.ATT", "does not apply to ATT"], version: "v1")
        refused(#"{"version":"v1","mqtt":{"ATT":[{"op":"throttle"}]}}"#, ["mqtt.ATT[0]"], version: "v1")
        refused(#"{"version":"v1","mqtt":{"GST":[]}}"#, ["mqtt.GST", "publishes ATT, SKY, TPV only"], version: "v1")
        refused(#"{"version":"v1","mqtt":{"XYZ":[]}}"#, ["mqtt.XYZ", "not a class"], version: "v1")
        // Named pipelines for the socket: the same checks as ?PIPELINE=, each named where it stands.
        let named = try parse(#"{"version":"v8","pipelines":{"coarse":{"TPV":[{"op":"sample","every":5}]},"att-1hz":{"ATT":[{"op":"throttle","interval":1}]}}}"#).get()
        XCTAssertEqual(named?.mqtt, [:], "no mqtt: the config's MQTT chains")
        XCTAssertEqual(named?.pipelines, [NamedPipeline(name: "coarse", chains: [.tpv: [.sample(every: 5)]], origin: .fleet),
                                          NamedPipeline(name: "att-1hz", chains: [.att: [.throttle(interval: 1, latest: true)]], origin: .fleet)])
        refused(#"{"version":"v1","pipelines":[]}"#, ["pipelines: expected an object of named pipelines"], version: "v1")
        refused(#"{"version":"v1","pipelines":{"Big Name":{"TPV":[]}}}"#, ["pipelines.Big Name: not a pipeline name"], version: "v1")
        refused(#"{"version":"v1","pipelines":{"p":{}}}"#, ["pipelines.p: no chains"], version: "v1")
        refused(#"{"version":"v1","pipelines":{"p":{"TPV":[]},"p":{"SKY":[]}}}"#, ["\"pipelines.p\" appears twice"], version: "v1")
        refused(#"{"version":"v1","pipelines":{"p":{"ATT":[{"op":"min_mode","mode":2}]}}}"#, ["pipelines.p.ATT", "does not apply to ATT"], version: "v1")
        refused(#"{"version":"v1","pipelines":{"p":{"GST":[{"op":"bogus"}]}}}"#, ["pipelines.p.GST[0]"], version: "v1")
        let many = (0...FleetPipelines.maxPipelines).map { "\"p\($0)\":{\"TPV\":[]}" }.joined(separator: ",")
        refused(#"{"version":"v1","pipelines":{"# + many + "}}", ["65 named pipelines; at most 64"], version: "v1")
        let held = try XCTUnwrap(named).refusal(heldBy: NamedPipeline(name: "coarse", chains: [:], origin: .client))
        XCTAssertEqual(held.message, "fleet pipelines \"v8\": pipelines.coarse: defined by a local client (?PIPELINE=) on this device; the fleet may not replace it")
        XCTAssertEqual(held.version, "v8")

        XCTAssertEqual(WireEncoding.fleetApplied(version: "v1"), #"{"class":"FLEET","status":"applied","version":"v1"}"#)
        XCTAssertEqual(WireEncoding.fleetApplied(version: "v8", pipelines: ["att-1hz", "coarse"]),
                       #"{"class":"FLEET","status":"applied","version":"v8","pipelines":["att-1hz","coarse"]}"#)
        XCTAssertEqual(WireEncoding.fleetApplied(version: "v8", notTaken: "off"), #"{"class":"FLEET","status":"applied","version":"v8","pipelines_not_taken":"off"}"#)
        XCTAssertEqual(WireEncoding.fleetApplied(version: nil), #"{"class":"FLEET","status":"config"}"#)
        XCTAssertTrue(WireEncoding.fleetRefused("why", version: nil, inForce: nil).hasSuffix(#""in_force":"config"}"#))
    }

    func testHomeAssistantConfigsHaveLegalIdsAndOneDevice() throws {
        let d = HomeAssistantDiscovery(device: "boat-7", prefix: "bearing/boat-7", version: "1.0")
        XCTAssertEqual(d.configs.count, 6)
        // The compass quality: an enum sensor on ATT's mag_q.
        let quality = try JSONValue.parse(try XCTUnwrap(d.configs.first { $0.topic.hasSuffix("/compass_quality/config") }).payload)
        XCTAssertEqual(quality["value_template"]?.string, "{{ value_json.mag_q | default('None') }}")
        XCTAssertEqual(quality["device_class"]?.string, "enum")
        XCTAssertEqual(quality["state_topic"]?.string, "bearing/boat-7/att")
        for c in d.configs {
            XCTAssertNotNil(c.topic.range(of: #"^homeassistant/(sensor|device_tracker)/bearing_boat_7/[a-z_]+/config$"#, options: .regularExpression), c.topic)
            let o = try JSONValue.parse(c.payload)
            XCTAssertEqual(o["availability_topic"]?.string, "bearing/boat-7/status")
            XCTAssertEqual(o["device"]?["identifiers"]?.list, [.string("bearing_boat_7")])
        }
        XCTAssertNil(HomeAssistantDiscovery.position(GPSFix(mode: .noFix)), "no position without a fix")
        var fix = GPSFix(mode: .twoD, latitude: 50.5, longitude: -1.25)
        fix.epx = 3
        fix.epy = 4.25
        XCTAssertEqual(HomeAssistantDiscovery.position(fix), #"{"latitude":50.5,"longitude":-1.25,"gps_accuracy":4.3}"#)
    }
}
