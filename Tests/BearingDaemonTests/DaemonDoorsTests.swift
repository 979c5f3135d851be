import BearingCompass
import BearingModel
import BearingAttitude
import BearingWire
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

/// A whole daemon in-process (`Daemon`, as `bearing run` builds it) on the simulated bus — the fused compass
/// of a board turning at 6°/s while rolling ±12° and pitching ±5° — with a real gpsd (gpsfake) where fixes
/// are needed, one daemon per test: what each door sends (the UNIX socket, the TCP door, NMEA 0183, Signal K,
/// MQTT against a real mosquitto, the data log), and that a shutdown closes them all.
final class DaemonDoorsTests: XCTestCase {
    /// The generated track starts here (DaemonRig: the Solent).
    let trackLatitude = 50.80, trackLongitude = -1.10
    /// The simulated board's turn: 6°/s to starboard.
    let turnRate = 6.0

    /// The declination (degrees east) at the fallback position now, and at the track's start on its date (WMM2025).
    var fallbackDeclination: Double { DaemonRig.fallbackField().declination.value }
    func trackDeclination(_ track: NMEATrack) -> Double { track.firstFixField.declination.value }

    // MARK: The socket and the TCP door

    /// A watching client of the UNIX socket: VERSION on connecting, DEVICES and WATCH answering the WATCH, then
    /// a TPV with the track's position (through gpsd) and an ATT with a heading from the compass.
    func testSocketWatchGetsVersionDevicesWatchThenTPVAndATT() throws {
        let rig = try DaemonRig("doors-socket", gps: true)
        defer { rig.finish() }
        let client = try SocketClient(path: rig.socketPath)
        client.watch()
        let objects = collectFixAndHeading(client)
        try checkWatchSession(objects, gpsdPort: rig.config.gpsd.port)
    }

    /// The TCP door (`socket.tcp` on a free loopback port) speaks the socket's protocol: the same greeting,
    /// DEVICES and WATCH as a UNIX-socket client of the same daemon gets, then TPV and ATT.
    func testTCPDoorSpeaksTheSameProtocol() throws {
        let tcpPort = freePort()
        let rig = try DaemonRig("doors-tcp", gps: true, configure: { $0.socket.tcp = ("127.0.0.1", tcpPort) })
        defer { rig.finish() }
        let tcp = try SocketClient(tcpPort: tcpPort)
        tcp.watch()
        let openingOverTCP = (0..<3).compactMap { _ in tcp.readLine(timeout: 5) }
        let overTCP = openingOverTCP.compactMap(jsonObject) + collectFixAndHeading(tcp)
        try checkWatchSession(overTCP, gpsdPort: rig.config.gpsd.port)

        // A UNIX-socket client of the same daemon gets the same opening: VERSION and WATCH line for line, and
        // DEVICES with the same configured devices (gpsd may have added its own since).
        let unix = try SocketClient(path: rig.socketPath)
        unix.watch()
        let openingOverUnix = (0..<3).compactMap { _ in unix.readLine(timeout: 5) }
        XCTAssertEqual(openingOverUnix.count, 3)
        guard openingOverUnix.count == 3, openingOverTCP.count == 3 else { return }
        XCTAssertEqual(openingOverUnix[0], openingOverTCP[0], "VERSION")
        XCTAssertEqual(openingOverUnix[2], openingOverTCP[2], "WATCH")
        func configured(_ line: String) -> [String] {
            (jsonObject(line)?["devices"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
                .filter { $0.hasPrefix("gpsd://") || $0.hasPrefix("i2c:") }
        }
        XCTAssertEqual(configured(openingOverUnix[1]), configured(openingOverTCP[1]), "DEVICES: \(openingOverUnix[1]) vs \(openingOverTCP[1])")
    }

    /// Reads until a TPV with a position and an ATT with a heading have both come (20 s at most).
    func collectFixAndHeading(_ client: SocketClient) -> [[String: Any]] {
        var fix = false, heading = false
        return client.collect(timeout: 20) { o in
            if cls(o) == "TPV" && o["lat"] is Double && o["lon"] is Double { fix = true }
            if cls(o) == "ATT" && o["heading"] is Double { heading = true }
            return fix && heading
        }
    }

    func checkWatchSession(_ objects: [[String: Any]], gpsdPort: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let classes = objects.map(cls)
        XCTAssertEqual(Array(classes.prefix(3)), ["VERSION", "DEVICES", "WATCH"], "\(classes.prefix(12))", file: file, line: line)
        let version = try XCTUnwrap(objects.first, file: file, line: line)
        XCTAssertTrue((version["release"] as? String ?? "").hasPrefix("bearing "), "\(version)", file: file, line: line)
        XCTAssertNotNil(version["proto_major"] as? Int, "\(version)", file: file, line: line)
        let watch = try XCTUnwrap(objects.first { cls($0) == "WATCH" }, file: file, line: line)
        XCTAssertEqual(watch["enable"] as? Bool, true, "\(watch)", file: file, line: line)
        XCTAssertEqual(watch["json"] as? Bool, true, "\(watch)", file: file, line: line)

        // DEVICES names gpsd and the two chips on the simulated bus (and gpsd's own device, once it has one).
        let devices = try XCTUnwrap(objects.first { cls($0) == "DEVICES" }?["devices"] as? [[String: Any]], file: file, line: line)
        let paths = devices.compactMap { $0["path"] as? String }
        XCTAssertTrue(paths.contains("gpsd://127.0.0.1:\(gpsdPort)"), "\(paths)", file: file, line: line)
        let sensors = paths.filter { $0.hasPrefix("i2c:") }
        XCTAssertEqual(sensors, [DaemonRig.magnetometerDevice, DaemonRig.imuDevice], "the magnetometer and the IMU: \(paths)", file: file, line: line)

        // Nothing but replies before the WATCH reply; data after it.
        let firstData = classes.firstIndex { $0 == "TPV" || $0 == "ATT" } ?? classes.count
        XCTAssertGreaterThan(firstData, 2, "\(classes.prefix(12))", file: file, line: line)

        let tpv = try XCTUnwrap(objects.first { cls($0) == "TPV" && $0["lat"] is Double }, "no TPV with a position: \(classes)", file: file, line: line)
        XCTAssertEqual(tpv["lat"] as? Double ?? .nan, trackLatitude, accuracy: 0.1, "\(tpv)", file: file, line: line)
        XCTAssertEqual(tpv["lon"] as? Double ?? .nan, trackLongitude, accuracy: 0.1, "\(tpv)", file: file, line: line)
        XCTAssertGreaterThanOrEqual(tpv["mode"] as? Int ?? 0, 2, "\(tpv)", file: file, line: line)
        // gpsd's device (gpsfake's pty), not a sensor.
        XCTAssertFalse((tpv["device"] as? String ?? "i2c:").hasPrefix("i2c:"), "\(tpv)", file: file, line: line)

        let att = try XCTUnwrap(objects.first { cls($0) == "ATT" && $0["heading"] is Double }, "no ATT with a heading: \(classes)", file: file, line: line)
        let heading = att["heading"] as? Double ?? .nan
        XCTAssertTrue((0..<360).contains(heading), "\(att)", file: file, line: line)
        XCTAssertNotNil(att["mheading"] as? Double, "\(att)", file: file, line: line)
        // The fused attitude comes as the IMU's.
        XCTAssertEqual(att["device"] as? String, DaemonRig.imuDevice, "\(att)", file: file, line: line)
    }

    // MARK: NMEA 0183

    /// `nmea0183` with a TCP listener and a UDP destination, talker II: HDT, HDM, HDG, ROT and XDR (the
    /// defaults) on both, each `$IIxxx,…*hh` with a valid checksum, CRLF-ended, at most 82 characters, one
    /// sentence per datagram; the values agree with the simulated board.
    func testNMEA0183DoorSendsChecksummedSentencesOverTCPAndUDP() throws {
        let nmeaPort = freePort()
        let udp = try LoopbackUDPSocket()
        let rig = try DaemonRig("doors-nmea", gps: false) { _ in
            """
            nmea0183:
              tcp: 127.0.0.1:\(nmeaPort)
              udp: 127.0.0.1:\(udp.port)
              talker: II
            """
        }
        defer { rig.finish() }
        let expected: Set<String> = ["HDT", "HDM", "HDG", "ROT", "XDR"]

        let reader = try RawTCPReader(port: nmeaPort)
        reader.read(timeout: 10) { bytes in
            let counts = Dictionary(grouping: RawTCPReader.crlfLines(bytes)) { Self.sentenceType($0) }.mapValues(\.count)
            return expected.allSatisfy { (counts[$0] ?? 0) >= 4 }
        }
        let sentences = reader.crlfLines
        XCTAssertFalse(sentences.isEmpty, "nothing from the NMEA door's TCP listener")
        // Every line break on the wire is a CRLF: no LF without its CR, no CR without its LF.
        XCTAssertEqual(Self.bareLineBreaks(reader.bytes), 0, "bare CR or LF: \(String(decoding: reader.bytes.prefix(300), as: UTF8.self).debugDescription)")
        let types = Set(sentences.map(Self.sentenceType))
        XCTAssertEqual(types, expected, "\(sentences.prefix(12))")
        for s in sentences { checkSentence(s, talker: "II") }
        checkSentenceValues(sentences)

        // UDP: one CRLF-ended sentence per datagram, the same kinds.
        let datagrams = udp.collect(timeout: 5) { got in
            expected.allSatisfy { t in got.filter { Self.sentenceType($0) == t }.count >= 2 }
        }
        XCTAssertEqual(Set(datagrams.map(Self.sentenceType)), expected, "\(datagrams.prefix(12))")
        for d in datagrams {
            guard let body = Self.withoutCRLF(d) else { XCTFail("not CRLF-ended: \(d.debugDescription)"); continue }
            XCTAssertFalse(body.utf8.contains(10) || body.utf8.contains(13), "one sentence per datagram: \(d.debugDescription)")
            checkSentence(body, talker: "II")
        }
        checkSentenceValues(datagrams.compactMap(Self.withoutCRLF))
    }

    /// `s` without its final CRLF; nil when it does not end in one. (In bytes: "\r\n" is one Character.)
    static func withoutCRLF(_ s: String) -> String? {
        let b = Array(s.utf8)
        guard b.count >= 2, b[b.count - 2] == 13, b[b.count - 1] == 10 else { return nil }
        return String(decoding: b.dropLast(2), as: UTF8.self)
    }

    /// CRs not followed by an LF and LFs not preceded by a CR (a cut-off CR at the very end is not counted).
    static func bareLineBreaks(_ b: [UInt8]) -> Int {
        var n = 0
        for i in b.indices {
            if b[i] == 13 && i + 1 < b.count && b[i + 1] != 10 { n += 1 }
            if b[i] == 10 && (i == 0 || b[i - 1] != 13) { n += 1 }
        }
        return n
    }

    /// `$IIHDT,…` → "HDT" (the three letters after the talker).
    static func sentenceType(_ s: String) -> String { String(s.dropFirst(3).prefix(3)) }

    /// `$` + talker + type + fields + `*` + the XOR of the bytes between, in two upper-case hex digits.
    func checkSentence(_ s: String, talker: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(s.hasPrefix("$" + talker), "talker \(talker): \(s.debugDescription)", file: file, line: line)
        XCTAssertLessThanOrEqual(s.utf8.count + 2, 82, "longer than NMEA 0183 allows: \(s)", file: file, line: line)
        guard let star = s.lastIndex(of: "*") else { return XCTFail("no checksum: \(s.debugDescription)", file: file, line: line) }
        let body = s[s.index(after: s.startIndex)..<star]
        let given = s[s.index(after: star)...]
        var sum: UInt8 = 0
        for b in body.utf8 { sum ^= b }
        XCTAssertEqual(String(given), String(format: "%02X", Int(sum)), "checksum of \(s.debugDescription)", file: file, line: line)
    }

    /// The fields: HDT = HDM + the variation HDG gives (Sydney's, east: no fix here), ROT about the board's
    /// 6°/s, XDR's pitch and roll within the board's swing.
    func checkSentenceValues(_ sentences: [String], file: StaticString = #filePath, line: UInt = #line) {
        func fields(_ s: String) -> [String] {
            let body = s.split(separator: "*", maxSplits: 1).first.map(String.init) ?? s
            return body.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        var groups = 0
        for (i, s) in sentences.enumerated() where Self.sentenceType(s) == "HDT" && i + 2 < sentences.count {
            // HDT, HDM and HDG share a chain: they leave together, from one attitude.
            guard Self.sentenceType(sentences[i + 1]) == "HDM", Self.sentenceType(sentences[i + 2]) == "HDG" else { continue }
            let hdt = fields(s), hdm = fields(sentences[i + 1]), hdg = fields(sentences[i + 2])
            guard hdt.count == 3, hdm.count == 3, hdg.count == 6 else {
                XCTFail("field counts: \(s) \(sentences[i + 1]) \(sentences[i + 2])", file: file, line: line)
                continue
            }
            XCTAssertEqual(hdt[2], "T", s, file: file, line: line)
            XCTAssertEqual(hdm[2], "M", sentences[i + 1], file: file, line: line)
            XCTAssertEqual(hdg[1], hdm[1], "HDG's heading is the magnetic one: \(sentences[i + 1]) \(sentences[i + 2])", file: file, line: line)
            XCTAssertEqual(hdg[5], "E", "Sydney's variation is east: \(sentences[i + 2])", file: file, line: line)
            let variation = Double(hdg[4]) ?? .nan
            XCTAssertEqual(variation, fallbackDeclination, accuracy: 0.15, sentences[i + 2], file: file, line: line)
            let trueHeading = Double(hdt[1]) ?? .nan, magnetic = Double(hdm[1]) ?? .nan
            XCTAssertTrue((0..<360).contains(trueHeading) && (0..<360).contains(magnetic), "\(s) \(sentences[i + 1])", file: file, line: line)
            XCTAssertEqual(remainder(trueHeading - magnetic - variation, 360), 0, accuracy: 0.15,
                           "HDT = HDM + variation: \(s) \(sentences[i + 1]) \(sentences[i + 2])", file: file, line: line)
            groups += 1
        }
        XCTAssertGreaterThan(groups, 0, "no HDT, HDM, HDG together: \(sentences.prefix(10))", file: file, line: line)
        for s in sentences where Self.sentenceType(s) == "ROT" {
            let f = fields(s)
            XCTAssertEqual(f.count, 3, s, file: file, line: line)
            XCTAssertEqual(f.last, "A", "a valid rate: \(s)", file: file, line: line)
            // °/min, + to starboard: 6°/s is 360°/min.
            XCTAssertEqual(Double(f[1]) ?? .nan, turnRate * 60, accuracy: 90, s, file: file, line: line)
        }
        for s in sentences where Self.sentenceType(s) == "XDR" {
            let f = fields(s)
            XCTAssertEqual(f.count, 9, s, file: file, line: line)
            guard f.count == 9 else { continue }
            XCTAssertEqual([f[1], f[3], f[4], f[5], f[7], f[8]], ["A", "D", "PTCH", "A", "D", "ROLL"], s, file: file, line: line)
            XCTAssertLessThanOrEqual(abs(Double(f[2]) ?? .nan), 8, "pitch within the board's ±5°: \(s)", file: file, line: line)
            XCTAssertLessThanOrEqual(abs(Double(f[6]) ?? .nan), 16, "roll within the board's ±12°: \(s)", file: file, line: line)
        }
    }

    // MARK: Signal K

    /// `signalk` with a TCP listener and a UDP destination, source `rigboat`: each line and each datagram is one
    /// delta for `vessels.self` whose update comes from `rigboat.compass` (heading, variation, attitude, rate
    /// of turn) or `rigboat.gps` (position, course, speed), in SI units — radians, rad/s, m/s — and degrees only
    /// for the position; valid against the specification's schemas when ../shared/signalk-schema is there.
    func testSignalKDoorSendsDeltasInRadians() throws {
        let signalKPort = freePort()
        let udp = try LoopbackUDPSocket()
        let rig = try DaemonRig("doors-signalk", gps: true) { _ in
            """
            signalk:
              tcp: 127.0.0.1:\(signalKPort)
              udp: 127.0.0.1:\(udp.port)
              source: rigboat
            """
        }
        defer { rig.finish() }

        // At least 3 s of compass deltas (a roll's half-period and more) and a fix.
        let reader = try RawTCPReader(port: signalKPort)
        let start = Syscall.monotonicSeconds()
        reader.read(timeout: 15) { bytes in
            let lines = RawTCPReader.crlfLines(bytes)
            return Syscall.monotonicSeconds() - start > 3 && lines.contains { $0.contains("\"rigboat.gps\"") }
        }
        let lines = reader.crlfLines
        XCTAssertEqual(Self.bareLineBreaks(reader.bytes), 0, "one delta per CRLF-ended line")
        let declinations = [fallbackDeclination, trackDeclination(try XCTUnwrap(rig.track))]
        let tcpDeltas = try checkDeltas(lines, transport: "TCP", declinations: declinations)
        XCTAssertGreaterThanOrEqual(tcpDeltas.compass, 10, "compass deltas over TCP at 5 Hz")
        XCTAssertGreaterThanOrEqual(tcpDeltas.gps, 1, "a fix delta over TCP")

        let datagrams = udp.collect(timeout: 5) { got in
            got.contains { $0.contains("\"rigboat.gps\"") } && got.filter { $0.contains("\"rigboat.compass\"") }.count >= 10
        }
        let udpLines = datagrams.compactMap(Self.withoutCRLF)
        XCTAssertEqual(udpLines.count, datagrams.count, "CRLF-ended datagrams: \(datagrams.prefix(2))")
        XCTAssertTrue(udpLines.allSatisfy { !$0.utf8.contains(10) && !$0.utf8.contains(13) }, "one delta per datagram")
        let udpDeltas = try checkDeltas(udpLines, transport: "UDP", declinations: declinations)
        XCTAssertGreaterThanOrEqual(udpDeltas.compass, 10, "compass deltas over UDP")
        XCTAssertGreaterThanOrEqual(udpDeltas.gps, 1, "a fix delta over UDP")

        // The specification's own schemas, when they are beside the repository (and Python's jsonschema is there).
        if signalKSchemas() != nil {
            do {
                print("Signal K schemas: " + (try validateSignalK(lines + udpLines)))
            } catch let skip as XCTSkip {
                print("SKIPPED the schema check: \(skip)")
            }
        } else {
            print("SKIPPED the schema check: ../shared/signalk-schema/schemas is not beside the repository")
        }
    }

    /// Checks each delta's structure and values (`declinations`: the variations it may give, in degrees: the
    /// fallback position's before the fix, the track's after); returns how many came from the compass and from
    /// the GPS.
    func checkDeltas(_ deltas: [String], transport: String, declinations: [Double], file: StaticString = #filePath, line: UInt = #line) throws -> (compass: Int, gps: Int) {
        let compassPaths: Set<String> = ["navigation.headingMagnetic", "navigation.headingTrue", "navigation.magneticVariation",
                                         "navigation.attitude", "navigation.rateOfTurn"]
        let gpsPaths: Set<String> = ["navigation.position", "navigation.courseOverGroundTrue", "navigation.speedOverGround"]
        var compass = 0, gps = 0
        var largestRoll = 0.0
        for text in deltas {
            guard let delta = jsonObject(text) else { XCTFail("\(transport): not a JSON object: \(text.prefix(200))", file: file, line: line); continue }
            XCTAssertEqual(delta["context"] as? String, "vessels.self", text, file: file, line: line)
            guard let updates = delta["updates"] as? [[String: Any]], updates.count == 1, let update = updates.first,
                  let values = update["values"] as? [[String: Any]], !values.isEmpty else {
                XCTFail("\(transport): no updates[0].values: \(text)", file: file, line: line)
                continue
            }
            XCTAssertNil(update["source"], "$source, not source: \(text)", file: file, line: line)
            if let timestamp = update["timestamp"] {
                XCTAssertTrue((timestamp as? String ?? "").hasSuffix("Z"), "UTC timestamp: \(text)", file: file, line: line)
            }
            var byPath: [String: Any] = [:]
            for v in values {
                guard let path = v["path"] as? String, let value = v["value"] else { XCTFail("path and value: \(text)", file: file, line: line); continue }
                XCTAssertNil(byPath[path], "\(path) twice: \(text)", file: file, line: line)
                byPath[path] = value
            }
            let source = update["$source"] as? String
            if source == "rigboat.compass" {
                compass += 1
                XCTAssertTrue(Set(byPath.keys).isSubset(of: compassPaths), "\(byPath.keys.sorted())", file: file, line: line)
                XCTAssertEqual(Set(byPath.keys), compassPaths, "the fused compass knows them all: \(text)", file: file, line: line)
                let magnetic = byPath["navigation.headingMagnetic"] as? Double ?? .nan
                let trueHeading = byPath["navigation.headingTrue"] as? Double ?? .nan
                let variation = byPath["navigation.magneticVariation"] as? Double ?? .nan
                for h in [magnetic, trueHeading] { XCTAssertTrue((0..<(2 * Double.pi)).contains(h), "a heading in [0, 2π): \(text)", file: file, line: line) }
                // The fallback's or the fix's declination, in radians.
                XCTAssertTrue(declinations.contains { abs(variation - $0 * .pi / 180) < 0.003 },
                              "variation \(variation) rad is not one of \(declinations.map { $0 * .pi / 180 }): \(text)", file: file, line: line)
                XCTAssertEqual(remainder(trueHeading - magnetic - variation, 2 * .pi), 0, accuracy: 1e-5, "true = magnetic + variation: \(text)", file: file, line: line)
                let attitude = byPath["navigation.attitude"] as? [String: Any] ?? [:]
                let roll = attitude["roll"] as? Double ?? .nan, pitch = attitude["pitch"] as? Double ?? .nan
                XCTAssertLessThanOrEqual(abs(roll), 16 * .pi / 180, "roll in radians, within the board's ±12°: \(text)", file: file, line: line)
                XCTAssertLessThanOrEqual(abs(pitch), 8 * .pi / 180, "pitch in radians, within the board's ±5°: \(text)", file: file, line: line)
                XCTAssertEqual(attitude["yaw"] as? Double ?? .nan, trueHeading, accuracy: 1e-6, "yaw is the true heading: \(text)", file: file, line: line)
                if roll.isFinite { largestRoll = max(largestRoll, abs(roll)) }
                // rad/s: the board's 6°/s.
                XCTAssertEqual(byPath["navigation.rateOfTurn"] as? Double ?? .nan, turnRate * .pi / 180, accuracy: 0.025, text, file: file, line: line)
            } else if source == "rigboat.gps" {
                gps += 1
                XCTAssertTrue(Set(byPath.keys).isSubset(of: gpsPaths), "\(byPath.keys.sorted())", file: file, line: line)
                let position = try XCTUnwrap(byPath["navigation.position"] as? [String: Any], text, file: file, line: line)
                XCTAssertEqual(position["latitude"] as? Double ?? .nan, trackLatitude, accuracy: 0.1, "degrees: \(text)", file: file, line: line)
                XCTAssertEqual(position["longitude"] as? Double ?? .nan, trackLongitude, accuracy: 0.1, "degrees: \(text)", file: file, line: line)
                if let cog = byPath["navigation.courseOverGroundTrue"] {
                    XCTAssertTrue((0..<(2 * Double.pi)).contains(cog as? Double ?? .nan), "radians: \(text)", file: file, line: line)
                }
                if let sog = byPath["navigation.speedOverGround"] {
                    // The track sails at 5.8 ± 0.4 kn: ≈ 3 m/s.
                    XCTAssertEqual(sog as? Double ?? .nan, 5.8 * 1852 / 3600, accuracy: 0.5, "m/s: \(text)", file: file, line: line)
                }
            } else {
                XCTFail("\(transport): $source \(source ?? "missing"), not rigboat.compass or rigboat.gps: \(text)", file: file, line: line)
            }
        }
        if compass >= 10 {
            // The board rolls ±12° every 5 s: over 2 s and more the roll must be seen to swing (in radians).
            XCTAssertGreaterThan(largestRoll, 4 * .pi / 180, "\(transport): the roll never swung", file: file, line: line)
        }
        return (compass, gps)
    }

    // MARK: MQTT

    /// The MQTT door against Debian's mosquitto: numbered ATT and TPV on `PREFIX/att` and `PREFIX/tpv` (`seq`
    /// from 1, each message the one before + 1, across the topics), the retained `online` on `PREFIX/status`
    /// (a new subscriber gets it, flagged retained), and `offline` there after a clean shutdown.
    func testMQTTDoorPublishesNumberedTPVAndATTAndTheRetainedStatus() throws {
        let scratch = temporaryDirectory("doors-mqtt-broker")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let broker = try MosquittoBroker(directory: scratch.appendingPathComponent("broker"))
        try broker.start()
        defer { broker.stop() }
        let prefix = "rigs/r1"
        let sub = try MQTTSubscriber(.mosquittoSub, port: broker.port, topic: "\(prefix)/#", clientID: "r1-watch-\(getpid())",
                                     output: scratch.appendingPathComponent("sub.txt"))
        defer { sub.stop() }
        sub.waitUntilSubscribed(port: broker.port, topic: "\(prefix)/probe")

        let rig = try DaemonRig("doors-mqtt", gps: true) { dir in
            """
            mqtt:
              broker: \(broker.url)
              device: r1
              prefix: \(prefix)
              retry_initial: 0.2
              retry_max: 1
              spool: {directory: \(dir.appendingPathComponent("spool").path)}
              topics: {att: [{op: throttle, interval: 0.2}], tpv: [{op: throttle, interval: 0.5}], sky: false}
            """
        }
        defer { rig.finish() }

        let (att, tpv, status) = ("\(prefix)/att", "\(prefix)/tpv", "\(prefix)/status")
        XCTAssertTrue(sub.wait(timeout: 20) { s in
            s.messages(on: att).count >= 10 && s.messages(on: tpv).filter { $0.payload.contains("\"lat\":") }.count >= 3
                && s.messages(on: status).contains { $0.payload == "online" }
        }, "ATT, TPV and status: \(sub.lines.suffix(6))")

        // A subscriber that comes now gets the status the broker kept.
        let late = try MQTTSubscriber(.mosquittoSub, port: broker.port, topic: status, clientID: "r1-late-\(getpid())",
                                      output: scratch.appendingPathComponent("late.txt"))
        defer { late.stop() }
        XCTAssertTrue(late.wait(timeout: 10) { !$0.messages(on: status).isEmpty }, "the retained status")
        XCTAssertEqual(late.messages(on: status).first?.retained, true)
        XCTAssertEqual(late.messages(on: status).first?.payload, "online")

        // Every data message, in the order the broker delivered them: numbered 1, 2, 3, … across the topics.
        let data = sub.lines.compactMap { line -> (topic: String, object: [String: Any])? in
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, [att, tpv, "\(prefix)/sky"].contains(String(parts[1])) else { return nil }
            guard let o = jsonObject(String(parts[2])) else { XCTFail("not JSON: \(line)"); return nil }
            return (String(parts[1]), o)
        }
        let seqs = data.map { $0.object["seq"] as? Int ?? -1 }
        XCTAssertEqual(seqs.first, 1, "numbered from 1: \(seqs.prefix(10))")
        XCTAssertEqual(seqs, Array(1..<(1 + seqs.count)), "each seq the one before + 1")
        XCTAssertFalse(data.contains { $0.topic == "\(prefix)/sky" }, "sky: false")
        for (topic, o) in data {
            XCTAssertEqual(cls(o), topic == att ? "ATT" : "TPV", "\(topic): \(o)")
        }
        let atts = data.filter { $0.topic == att }.map(\.object)
        XCTAssertTrue(atts.allSatisfy { ($0["heading"] as? Double).map { (0..<360).contains($0) } ?? false }, "ATT with headings: \(atts.prefix(3))")
        let fixes = data.filter { $0.topic == tpv }.map(\.object).filter { $0["lat"] is Double }
        XCTAssertTrue(fixes.allSatisfy { abs(($0["lat"] as? Double ?? 0) - trackLatitude) < 0.1 }, "\(fixes.prefix(3))")

        // A clean shutdown says offline.
        XCTAssertNotNil(rig.shutdown(), "run() returned")
        XCTAssertTrue(sub.wait(timeout: 10) { $0.messages(on: status).last?.payload == "offline" }, "offline after shutdown: \(sub.messages(on: status))")
    }

    // MARK: The data log

    /// `log.data_log`: NDJSON, each line one JSON object with a class; TPVs (with the track's position) and
    /// ATTs (with headings) among them; after the shutdown the file ends with a whole line.
    func testDataLogIsNDJSONWithTPVAndATT() throws {
        let rig = try DaemonRig("doors-datalog", gps: true) { dir in
            "log: {data_log: \(dir.appendingPathComponent("data.ndjson").path)}"
        }
        defer { rig.finish() }
        let path = try XCTUnwrap(rig.config.log.dataLog)
        func read() -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

        let deadline = Syscall.monotonicSeconds() + 20
        var text = ""
        while Syscall.monotonicSeconds() < deadline {
            text = read()
            if text.contains(#"{"class":"TPV""#) && text.contains(#""lat":"#) && text.contains(#"{"class":"ATT""#) { break }
            usleep(100_000)
        }
        XCTAssertNotNil(rig.shutdown(), "run() returned")
        text = read()
        XCTAssertTrue(text.hasSuffix("\n"), "the last line is whole: \(text.suffix(200).debugDescription)")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        XCTAssertGreaterThan(lines.count, 5, text)
        var classes: [String: Int] = [:]
        for line in lines {
            XCTAssertFalse(line.contains("\r"), "NDJSON lines end in LF: \(line.debugDescription)")
            guard let o = jsonObject(String(line)) else { XCTFail("not a JSON object: \(line.prefix(200))"); continue }
            XCTAssertFalse(cls(o).isEmpty, "no class: \(line)")
            classes[cls(o), default: 0] += 1
        }
        let objects = lines.compactMap { jsonObject(String($0)) }
        let fixes = objects.filter { cls($0) == "TPV" && $0["lat"] is Double }
        XCTAssertFalse(fixes.isEmpty, "TPVs with a position: \(classes)")
        XCTAssertTrue(fixes.allSatisfy { abs(($0["lat"] as? Double ?? 0) - trackLatitude) < 0.1 && abs(($0["lon"] as? Double ?? 0) - trackLongitude) < 0.1 })
        XCTAssertTrue(objects.contains { cls($0) == "ATT" && $0["heading"] is Double }, "ATTs with a heading: \(classes)")
        XCTAssertTrue(objects.contains { isState($0, "connected") && $0["source"] as? String == "gpsd" }, "gpsd's STATE: \(classes)")
    }

    // MARK: Shutdown

    /// With every door open and a reader on each, `shutdown()` makes `run()` return within 3 s: STOPPING=1 is
    /// sent, the readers get EOF, the socket file is gone, every listening port refuses connections, and no
    /// datagram follows.
    func testShutdownReturnsPromptlyAndClosesEveryDoor() throws {
        let (tcpPort, nmeaPort, signalKPort) = (freePort(), freePort(), freePort())
        let nmeaUDP = try LoopbackUDPSocket(), signalKUDP = try LoopbackUDPSocket()
        let rig = try DaemonRig("doors-shutdown", gps: true, doors: { dir in
            """
            nmea0183: {tcp: 127.0.0.1:\(nmeaPort), udp: 127.0.0.1:\(nmeaUDP.port)}
            signalk: {tcp: 127.0.0.1:\(signalKPort), udp: 127.0.0.1:\(signalKUDP.port)}
            log: {data_log: \(dir.appendingPathComponent("data.ndjson").path)}
            """
        }) { $0.socket.tcp = ("127.0.0.1", tcpPort) }
        defer { rig.finish() }

        // A reader on each, each shown to be live.
        let unix = try SocketClient(path: rig.socketPath)
        unix.watch()
        XCTAssertTrue(unix.collect(timeout: 10) { cls($0) == "TPV" }.contains { cls($0) == "TPV" }, "TPV on the socket")
        let tcp = try SocketClient(tcpPort: tcpPort)
        tcp.watch()
        XCTAssertTrue(tcp.collect(timeout: 10) { cls($0) == "ATT" }.contains { cls($0) == "ATT" }, "ATT on the TCP door")
        let nmea = try RawTCPReader(port: nmeaPort)
        XCTAssertTrue(nmea.read(timeout: 5) { !RawTCPReader.crlfLines($0).isEmpty }, "sentences from the NMEA 0183 door")
        let signalK = try RawTCPReader(port: signalKPort)
        XCTAssertTrue(signalK.read(timeout: 5) { !RawTCPReader.crlfLines($0).isEmpty }, "deltas from the Signal K door")
        XCTAssertNotNil(nmeaUDP.next(timeout: 5), "NMEA datagrams")
        XCTAssertNotNil(signalKUDP.next(timeout: 5), "Signal K datagrams")
        XCTAssertNil(tcpConnectError(port: tcpPort))
        XCTAssertNil(unixConnectError(path: rig.socketPath))

        let seconds = try XCTUnwrap(rig.shutdown(timeout: 10), "run() did not return within 10 s of shutdown()")
        print("shutdown with every door open: run() returned in \(String(format: "%.2f", seconds)) s")
        XCTAssertLessThan(seconds, 3, "run() returns promptly")
        XCTAssertNil(rig.runEnded.error, "run() threw")
        XCTAssertTrue(rig.waitForNotification("STOPPING=1", timeout: 1), "STOPPING=1: \(rig.notifications)")

        // Readers see the end of the stream (what was queued may come first).
        XCTAssertTrue(nmea.waitForClose(timeout: 2), "the NMEA reader's connection closed")
        XCTAssertTrue(signalK.waitForClose(timeout: 2), "the Signal K reader's connection closed")
        _ = unix.collect(timeout: 2) { _ in false }
        XCTAssertTrue(peerClosed(unix.fd), "the socket client's connection closed")
        _ = tcp.collect(timeout: 2) { _ in false }
        XCTAssertTrue(peerClosed(tcp.fd), "the TCP client's connection closed")

        XCTAssertFalse(FileManager.default.fileExists(atPath: rig.socketPath), "the socket file is removed")
        XCTAssertEqual(unixConnectError(path: rig.socketPath), ENOENT)
        for (name, port) in [("TCP door", tcpPort), ("NMEA 0183 door", nmeaPort), ("Signal K door", signalKPort)] {
            XCTAssertEqual(tcpConnectError(port: port), ECONNREFUSED, "\(name) on \(port) still takes connections")
        }
        // No datagram is sent after run() returned.
        nmeaUDP.drain()
        signalKUDP.drain()
        XCTAssertNil(nmeaUDP.next(timeout: 0.6), "an NMEA datagram after the shutdown")
        XCTAssertNil(signalKUDP.next(timeout: 0.1), "a Signal K datagram after the shutdown")
        let log = (try? String(contentsOfFile: rig.config.log.dataLog ?? "", encoding: .utf8)) ?? ""
        XCTAssertTrue(log.hasSuffix("\n") && log.contains(#"{"class":"TPV""#), "the data log is flushed and whole")
    }
}

/// `Daemon`'s life cycle without the rig's READY=1 handshake.
final class DaemonLifecycleTests: XCTestCase {
    /// A shutdown asked for before `run()` is kept: `run()` starts, stops every service and returns.
    func testAShutdownBeforeRunIsKept() async throws {
        let dir = temporaryDirectory("early-shutdown")
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try Daemon(config: makeAgentConfig(gpsdPort: 1, dir: dir), logger: testLogger(), signals: [])
        daemon.shutdown()
        let returned = await withTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await daemon.run()) != nil }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return false
            }
            let first = await group.next() ?? false
            daemon.shutdown()   // when the first was lost, this ends run() so that the group can finish
            group.cancelAll()
            return first
        }
        XCTAssertTrue(returned, "run() did not return within 10 s of a shutdown() asked for before it")
        XCTAssertFalse(FileManager.default.fileExists(atPath: daemon.socket.socketPath), "the socket file stays after the run")
    }
}
