import BearingModel
import BearingPOSIX
import BearingMarine
import Foundation
import DaemonTestRig
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The NMEA 0183 and Signal K doors of a running `bearing run --board simulator` (a fused compass turning at
/// 6°/s while rolling and pitching), read by real consumers:
/// - Debian's gpsd reads the NMEA door (`tcp://127.0.0.1:PORT`) beside a GPS track it reads over TCP, and
///   Bearing reads that gpsd: gpsd's ATT must carry what Bearing sent (3.22 decodes HDT; 3.25 also HDM, ROT
///   and XDR), and Bearing must not relay it back (the loop);
/// - pynmea2, Debian's (python3-nmea2) and PyPI's, parses every sentence (TCP and UDP), verifies its checksum
///   and finds its fields in Bearing's own ATT/TPV stream (Tests/Fixtures/marine/check_nmea.py);
/// - every Signal K delta (TCP and UDP) is validated against the specification's schemas
///   (../shared/signalk-schema, Tests/Fixtures/marine/validate_signalk.py, Python's jsonschema).
final class MarineDoorTests: XCTestCase {
    /// Where .ci/run (and scripts/trixie) put PyPI's pynmea2, apart from Debian's (a PYTHONPATH entry).
    static let pypiPynmea2 = "/opt/bearing-pypi"

    func testDoorsAgainstGpsdPynmea2AndTheSignalKSchemas() throws {
        try requireGpsfake()
        guard signalKSchemas() != nil else { throw XCTSkip("SKIPPED: ../shared/signalk-schema/schemas is not beside the repository") }
        let dir = temporaryDirectory("marine")
        defer { try? FileManager.default.removeItem(at: dir) }

        // A GPS track, served over TCP for gpsd (one line every 50 ms, over and over).
        let (_, track) = try writeTrack(in: dir) { $0.epochs = 600 }
        let trackPort = freePort()
        let trackServer = Process()
        trackServer.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        trackServer.arguments = ["-c", """
            import socket, sys, time
            lines = [l for l in open(sys.argv[1], 'rb').read().split(b'\\n') if l.strip()]
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(('127.0.0.1', int(sys.argv[2]))); s.listen(4)
            while True:
                c, _ = s.accept()
                try:
                    for l in lines * 10:
                        c.sendall(l.rstrip(b'\\r') + b'\\r\\n'); time.sleep(0.05)
                except OSError:
                    pass
            """, track.path, String(trackPort)]
        try trackServer.run()
        defer { trackServer.terminate(); trackServer.waitUntilExit() }

        let (gpsdPort, nmeaPort, signalKPort) = (freePort(), freePort(), freePort())
        // gpsd also listens for the door's datagrams (udp://), on a port of its own.
        let gpsdUDPPort = try { () throws -> Int in let r = try LoopbackUDPSocket(); return r.port }()
        let nmeaUDP = try LoopbackUDPSocket(), signalKUDP = try LoopbackUDPSocket()
        // A deviation curve in force (as `bearing swing` writes it): HDG carries the sensor heading and the deviation.
        let deviationFile = dir.appendingPathComponent("deviation.json")
        try #"{"format":"bearing-deviation-1","coefficients":[-1.5,2.5,-1.0,0.6,-0.4],"time":"2026-11-27T00:00:00.000Z","source":"swing"}"#
            .write(to: deviationFile, atomically: true, encoding: .utf8)
        let config = dir.appendingPathComponent("bearing.yaml")
        try """
            gpsd: {host: 127.0.0.1, port: \(gpsdPort), retry_initial: 0.05, retry_max: 0.5}
            calibration: {deviation_file: \(deviationFile.path)}
            socket: {path: \(dir.appendingPathComponent("bearing.sock").path)}
            heading: {fallback_position: [-33.9, 151.2, 0]}
            nmea0183:
              tcp: 127.0.0.1:\(nmeaPort)
              udp: [127.0.0.1:\(nmeaUDP.port), 127.0.0.1:\(gpsdUDPPort)]
              sentences: {rmc: true}
            signalk:
              tcp: 127.0.0.1:\(signalKPort)
              udp: 127.0.0.1:\(signalKUDP.port)
            """.write(to: config, atomically: true, encoding: .utf8)
        let (bearing, _, bearingErr) = try launchBearing(["run", "--board", "simulator", "--config", config.path, "--log-level", "info"])
        defer { if bearing.isRunning { kill(bearing.processIdentifier, SIGKILL) } }
        let socketPath = dir.appendingPathComponent("bearing.sock").path
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: socketPath) && Date() < deadline { usleep(50_000) }
        usleep(300_000)

        // gpsd reads the GPS track and Bearing's NMEA door; Bearing reads that gpsd.
        let gpsd = Process()
        gpsd.executableURL = URL(fileURLWithPath: "/usr/sbin/gpsd")
        gpsd.arguments = ["-N", "-n", "-b", "-S", String(gpsdPort), "tcp://127.0.0.1:\(trackPort)", "tcp://127.0.0.1:\(nmeaPort)",
                          "udp://127.0.0.1:\(gpsdUDPPort)"]
        gpsd.standardOutput = FileHandle.nullDevice
        gpsd.standardError = FileHandle.nullDevice
        try gpsd.run()
        defer { if gpsd.isRunning { gpsd.terminate() }; gpsd.waitUntilExit() }
        usleep(500_000)

        // Everything at once for 10 s: Bearing's full ATT and TPV streams (empty chains), the doors' TCP and
        // UDP output, and gpsd's JSON.
        let seconds = 10.0
        let bearingClient = try SocketClient(path: socketPath)
        bearingClient.watch(#","pipelines":{"ATT":[],"TPV":[]}"#)
        // Bearing's stream first, and read a second longer than the doors': every sentence and delta must
        // find its instant in it. What the UDP sockets queued before is dropped.
        usleep(500_000)
        nmeaUDP.drain()
        signalKUDP.drain()
        let nmeaReader = try SocketClient(tcpPort: nmeaPort)
        let signalKReader = try SocketClient(tcpPort: signalKPort)
        let gpsdClient = try SocketClient(tcpPort: gpsdPort)
        gpsdClient.watch()
        let collected = collect(streams: [(bearingClient.fd, seconds + 1), (nmeaReader.fd, seconds), (signalKReader.fd, seconds), (gpsdClient.fd, seconds)],
                                datagrams: [(nmeaUDP.fd, seconds), (signalKUDP.fd, seconds)])
        let (bearingLines, sentences, gpsdLines) = (collected.lines[0], collected.lines[1], collected.lines[3])
        let deltas = collected.lines[2].map { String($0.dropLast()) }
        let (nmeaDatagrams, signalKDatagrams) = (collected.datagrams[0], collected.datagrams[1])

        kill(bearing.processIdentifier, SIGTERM)
        bearing.waitUntilExit()
        let log = String(decoding: bearingErr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(bearing.terminationStatus, 0, log)
        XCTAssertTrue(log.contains("NMEA 0183 door closed"), log)

        let objects = bearingLines.map { String($0.dropLast()) }.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
        let compassATT = objects.filter { cls($0) == "ATT" && ($0["device"] as? String ?? "").hasPrefix("i2c:") }
        let doorDevices = ["tcp://127.0.0.1:\(nmeaPort)", "udp://127.0.0.1:\(gpsdUDPPort)"]
        let echoes = objects.filter { doorDevices.contains($0["device"] as? String ?? "") }
        XCTAssertGreaterThan(compassATT.count, 300, "Bearing's own ATT stream")
        XCTAssertTrue(objects.contains { cls($0) == "TPV" && ($0["mode"] as? Int ?? 0) >= 2 }, "fixes from the track through gpsd")
        XCTAssertEqual(echoes.count, 0, "gpsd's decoding of Bearing's own NMEA must not come back: \(echoes.prefix(2))")

        // The sentences, as a plotter gets them: CRLF-ended (the reader strips the LF), valid, in Bearing's stream.
        XCTAssertTrue(sentences.allSatisfy { $0.hasSuffix("\r") }, "CRLF")
        let types = Dictionary(grouping: sentences) { String($0.dropFirst(3).prefix(3)) }.mapValues(\.count)
        print("NMEA 0183 door, \(seconds) s: \(sentences.count) sentences over TCP \(types.sorted { $0.key < $1.key }), \(nmeaDatagrams.count) datagrams")
        for t in ["HDT", "HDM", "HDG", "ROT", "XDR"] { XCTAssertGreaterThan(types[t] ?? 0, 10, "\(t) at its rate") }
        XCTAssertTrue(compassATT.allSatisfy { $0["deviation"] != nil }, "the deviation curve corrects every ATT")
        let filledHDG = sentences.filter { $0.dropFirst(3).hasPrefix("HDG") && $0.split(separator: ",", omittingEmptySubsequences: false)[2] != "" }
        XCTAssertEqual(filledHDG.count, types["HDG"] ?? 0, "every HDG carries the deviation: \(sentences.filter { $0.dropFirst(3).hasPrefix("HDG") }.prefix(3))")
        XCTAssertGreaterThan(types["RMC"] ?? 0, 3, "RMC at 1 Hz once there is a fix")
        let json = dir.appendingPathComponent("bearing.ndjson")
        try bearingLines.map { $0.dropLast() + "\n" }.joined().write(to: json, atomically: true, encoding: .utf8)
        let tcpFile = dir.appendingPathComponent("nmea-tcp.txt"), udpFile = dir.appendingPathComponent("nmea-udp.txt")
        try sentences.map { $0 + "\n" }.joined().write(to: tcpFile, atomically: true, encoding: .utf8)
        XCTAssertTrue(nmeaDatagrams.allSatisfy { $0.hasSuffix("\r\n") && $0.dropLast(2).firstIndex(of: "\n") == nil }, "one CRLF-ended sentence per datagram")
        try nmeaDatagrams.joined().write(to: udpFile, atomically: true, encoding: .utf8)
        var pynmea2Runs = 0
        for (label, pythonPath) in [("Debian python3-nmea2", nil), ("PyPI pynmea2", Self.pypiPynmea2)] as [(String, String?)] {
            if let pythonPath, !FileManager.default.fileExists(atPath: pythonPath + "/pynmea2") {
                print("SKIPPED: \(label): \(pythonPath) not installed (.ci/run installs it)")
                continue
            }
            for file in [tcpFile, udpFile] {
                let (status, out) = runPython(marineFixtures.appendingPathComponent("check_nmea.py").path, [file.path, json.path], pythonPath: pythonPath)
                if status == 77 { print("SKIPPED: \(label): \(out)"); continue }
                print("\(label), \(file.lastPathComponent): \(out)")
                XCTAssertEqual(status, 0, "\(label) on \(file.lastPathComponent): \(out)")
                pynmea2Runs += 1
            }
        }
        XCTAssertGreaterThan(pynmea2Runs, 0, "no pynmea2 at all (apt-get install python3-nmea2)")

        // Signal K: every delta from both outputs against the schemas, and the values in SI units.
        XCTAssertGreaterThan(deltas.count, 30, "Signal K deltas over TCP")
        XCTAssertGreaterThan(signalKDatagrams.count, 0, "Signal K deltas over UDP")
        print("Signal K: " + (try validateSignalK(deltas + signalKDatagrams.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })))
        try checkSignalKValues(deltas, against: compassATT)

        // gpsd's ATT from the door (over TCP and over UDP), value by value against Bearing's.
        let gpsdObjects = gpsdLines.map { String($0.dropLast()) }.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
        let release = gpsdRelease ?? "?"
        let expected = release.hasPrefix("3.22") ? ["heading"] : ["heading", "mheading", "pitch", "roll", "rot"]
        for device in doorDevices {
            let fromDoor = gpsdObjects.filter { cls($0) == "ATT" && ($0["device"] as? String) == device }
            let comparison = align(fromDoor, with: compassATT, fields: expected)
            print("gpsd \(release) reading the NMEA door as \(device.prefix(3)): \(fromDoor.count) ATT, \(comparison.matched) values found in Bearing's ATT stream; max |gpsd − Bearing| "
                  + expected.map { "\($0) \(String(format: "%.3f", comparison.maxDifference[$0] ?? .nan))" }.joined(separator: ", ")
                  + "; fields seen: \(comparison.seen.sorted())")
            XCTAssertGreaterThan(fromDoor.count, 10, "gpsd \(release) made ATT of Bearing's sentences from \(device)")
            XCTAssertEqual(comparison.unmatched, [], "gpsd ATT from \(device) not found in Bearing's stream")
            for f in expected { XCTAssertTrue(comparison.seen.contains(f), "gpsd \(release) should decode \(f) from \(device): seen \(comparison.seen)") }
        }
    }

    /// Readers that never read cannot lock the NMEA door: with 20 of them connected (16 hold the slots, each
    /// with the smallest receive buffer), a fresh reader gets sentences within a few seconds of their buffers
    /// filling, taking a stalled reader's slot; the eviction is logged with the reader's address and counted.
    func testStalledReadersCannotLockAFreshReaderOutOfTheNMEADoor() throws {
        let dir = temporaryDirectory("marine-stalled")
        defer { try? FileManager.default.removeItem(at: dir) }
        let nmeaPort = freePort()
        let config = dir.appendingPathComponent("bearing.yaml")
        // Every sentence at the compass's rate, so that the stalled readers' buffers fill in a second or two.
        try """
            gpsd: {host: 127.0.0.1, port: \(freePort()), retry_initial: 0.05, retry_max: 0.5}
            socket: {path: \(dir.appendingPathComponent("bearing.sock").path)}
            heading: {fallback_position: [-33.9, 151.2, 0]}
            nmea0183:
              tcp: 127.0.0.1:\(nmeaPort)
              sentences: {hdt: [], hdm: [], hdg: [], rot: [], xdr: []}
            """.write(to: config, atomically: true, encoding: .utf8)
        let (bearing, _, bearingErr) = try launchBearing(["run", "--board", "simulator", "--config", config.path, "--log-level", "info"])
        defer { if bearing.isRunning { kill(bearing.processIdentifier, SIGKILL) } }

        // The door takes readers once the daemon is up; the first reader proves it and then leaves.
        var probe: SocketClient?
        let up = Date().addingTimeInterval(20)
        while probe?.readLine(timeout: 1) == nil && Date() < up { probe = try? SocketClient(tcpPort: nmeaPort); if probe == nil { usleep(100_000) } }
        XCTAssertNotNil(probe, "the NMEA door serves")
        probe = nil

        var stalled: [Int32] = []
        defer { for fd in stalled { close(fd) } }
        for _ in 0..<20 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var small: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            let r = withLoopbackAddress(port: nmeaPort) { connect(fd, $0, $1) }
            XCTAssertEqual(r, 0, "connect")
            stalled.append(fd)
        }

        // A fresh reader tries every half second, as a plotter reconnects, until it gets a sentence.
        let start = Date()
        var sentence: String?
        var attempts = 0
        while sentence == nil && Date().timeIntervalSince(start) < 30 {
            attempts += 1
            if attempts > 1 { usleep(500_000) }
            guard let reader = try? SocketClient(tcpPort: nmeaPort) else { continue }
            sentence = reader.readLine(timeout: 1)
        }
        let waited = Date().timeIntervalSince(start)
        print("a fresh reader got NMEA sentences \(String(format: "%.1f", waited)) s after 20 stalled readers connected (\(attempts) attempts)")
        XCTAssertTrue(sentence?.hasPrefix("$HC") ?? false, "a fresh reader gets sentences: \(sentence ?? "nothing")")
        XCTAssertLessThan(waited, 10, "within a few seconds")

        kill(bearing.processIdentifier, SIGTERM)
        bearing.waitUntilExit()
        let log = String(decoding: bearingErr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(bearing.terminationStatus, 0, log)
        let evictions = log.split(separator: "\n").filter { $0.contains("nmea0183: evicted a reader that stopped reading (tcp 127.0.0.1:") }
        XCTAssertGreaterThanOrEqual(evictions.count, 1, log)
        XCTAssertTrue(log.contains("readers_evicted=\(evictions.count) "), "the door's count matches its log lines: \(log)")
    }

    /// Signal K values equal Bearing's ATT in radians (a delta per attitude the chain passed).
    func checkSignalKValues(_ deltas: [String], against att: [[String: Any]]) throws {
        var checked = 0
        for line in deltas {
            let d = try XCTUnwrap((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any], line)
            guard let update = (d["updates"] as? [[String: Any]])?.first, let values = update["values"] as? [[String: Any]] else { continue }
            var byPath: [String: Any] = [:]
            for v in values { if let p = v["path"] as? String { byPath[p] = v["value"] } }
            guard let mheading = byPath["navigation.headingMagnetic"] as? Double else { continue }
            let rateOfTurn = byPath["navigation.rateOfTurn"] as? Double ?? .nan
            let match = att.contains { a in
                let m: Double = a["mheading"] as? Double ?? .nan, r: Double = a["rot"] as? Double ?? .nan
                return abs(m * .pi / 180 - mheading) < 1e-3 && abs(r * .pi / 10_800 - rateOfTurn) < 1e-4
            }
            XCTAssertTrue(match, "no ATT with this heading and rate of turn: \(line)")
            // With a deviation curve in force: the sensor heading and the deviation, in radians, from one ATT.
            let compass = try XCTUnwrap(byPath["navigation.headingCompass"] as? Double, "no headingCompass with a curve in force: \(line)")
            let deviation = try XCTUnwrap(byPath["navigation.magneticDeviation"] as? Double, line)
            XCTAssertTrue(att.contains { a in
                let m: Double = a["mheading"] as? Double ?? .nan, dev: Double = a["deviation"] as? Double ?? .nan
                let sensor = (m - dev).truncatingRemainder(dividingBy: 360) + (m - dev < 0 ? 360 : 0)
                return abs(sensor * .pi / 180 - compass) < 1e-3 && abs(dev * .pi / 180 - deviation) < 1e-4
            }, "no ATT with this compass heading and deviation: \(line)")
            let attitude = try XCTUnwrap(byPath["navigation.attitude"] as? [String: Double], line)
            XCTAssertTrue(attitude["roll"].map { abs($0) < 0.5 } ?? false, "roll in radians: \(line)")
            checked += 1
        }
        XCTAssertGreaterThan(checked, 30)
    }

    /// gpsd's values of each field found in order in Bearing's stream, field by field: gpsd keeps each ATT
    /// field until a sentence changes it (3.25 sends an ATT per sentence, HDT's heading beside the pitch of an
    /// earlier XDR), so its successive distinct values of a field are what Bearing sent of it. Within the
    /// sentences' rounding to 0.1 plus the JSON's to 0.01; angles mod 360.
    func align(_ gpsd: [[String: Any]], with bearing: [[String: Any]], fields: [String]) -> (matched: Int, unmatched: [String], maxDifference: [String: Double], seen: Set<String>) {
        var matched = 0
        var unmatched: [String] = [], maxDifference: [String: Double] = [:], seen = Set<String>()
        for f in fields {
            let isAngle = f == "heading" || f == "mheading"
            func diff(_ a: Double, _ b: Double) -> Double {
                guard isAngle else { return abs(a - b) }
                let d = abs(a - b).truncatingRemainder(dividingBy: 360)
                return min(d, 360 - d)
            }
            var values: [Double] = []
            for g in gpsd { if let v = g[f] as? Double, v != values.last { values.append(v) } }
            if !values.isEmpty { seen.insert(f) }
            let ours = bearing.compactMap { $0[f] as? Double }
            var i = 0
            for v in values {
                let start = i
                while i < ours.count && diff(ours[i], v) > 0.0551 { i += 1 }
                if i < ours.count {
                    maxDifference[f] = max(maxDifference[f] ?? 0, diff(ours[i], v))
                    matched += 1
                } else {
                    unmatched.append("\(f) \(v)")
                    i = start
                }
            }
        }
        return (matched, unmatched, maxDifference, seen)
    }
}

/// Everything that arrives for `seconds` on stream sockets (split at LF, each line keeping its CR: gpsd
/// JSON and NMEA both end lines with CRLF) and datagram sockets (one string each), in one thread.
func collect(streams: [(fd: Int32, seconds: Double)], datagrams: [(fd: Int32, seconds: Double)]) -> (lines: [[String]], datagrams: [[String]]) {
    var bytes = [[UInt8]](repeating: [], count: streams.count)
    var grams = [[String]](repeating: [], count: datagrams.count)
    var buffer = [UInt8](repeating: 0, count: 65536)
    let fds = (streams + datagrams).map(\.fd)
    let start = Date()
    let ends = (streams + datagrams).map { start.addingTimeInterval($0.seconds) }
    var open = [Bool](repeating: true, count: fds.count)
    while let end = ends.enumerated().filter({ open[$0.offset] && $0.element.timeIntervalSinceNow > 0 }).map(\.element).max() {
        for i in fds.indices where ends[i].timeIntervalSinceNow <= 0 { open[i] = false }
        var polls = fds.enumerated().map { pollfd(fd: open[$0.offset] ? $0.element : -1, events: Int16(POLLIN), revents: 0) }
        let r = poll(&polls, nfds_t(polls.count), Int32(max(1, min(end.timeIntervalSinceNow, 0.05) * 1000)))
        if r < 0 && errno == EINTR { continue }
        guard r > 0 else { continue }
        for (i, p) in polls.enumerated() where p.revents != 0 {
            let n = recv(fds[i], &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n <= 0 { if n == 0 || (errno != EAGAIN && errno != EINTR) { open[i] = false }; continue }
            if i < streams.count { bytes[i] += buffer[0..<n] } else { grams[i - streams.count].append(String(decoding: buffer[0..<n], as: UTF8.self)) }
        }
    }
    // A line cut at the end of the window is left out.
    let lines = bytes.map { b -> [String] in
        guard let last = b.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
        return b[...last].split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
    }
    return (lines, grams)
}
