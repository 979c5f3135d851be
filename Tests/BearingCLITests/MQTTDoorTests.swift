import BearingModel
import BearingWire
import BearingPOSIX
import BearingMQTT
import BearingDaemon
import Foundation
import DaemonTestRig
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The MQTT door against a real broker (Debian's mosquitto, started here on a free loopback port) and
/// real subscribers (mosquitto_sub and Python's paho-mqtt, persistent sessions at QoS 1): what arrives is
/// proven by the sequence numbers Bearing puts in every message.
final class MQTTDoorTests: XCTestCase {
    /// `bearing run --board simulator` (ATT at ~100 Hz from the simulated IMU and magnetometer) with the
    /// MQTT door: `mqtt` is the section's body, indented.
    func writeConfig(_ dir: URL, broker: MosquittoBroker, device: String, mqtt: String = "") throws -> URL {
        let config = dir.appendingPathComponent("bearing-\(device).yaml")
        try """
            gpsd: {host: 127.0.0.1, port: \(freePort()), retry_initial: 1, retry_max: 5}
            socket: {path: \(dir.appendingPathComponent("\(device).sock").path)}
            pipeline_store: \(dir.appendingPathComponent("pipelines-\(device).json").path)
            mqtt:
              broker: \(broker.url)
              device: \(device)
              retry_initial: 0.2
              retry_max: 1
              spool: {directory: \(dir.appendingPathComponent("spool-\(device)").path)}
            \(mqtt)
            """.write(to: config, atomically: true, encoding: .utf8)
        return config
    }

    func start(_ config: URL) throws -> (Process, Pipe) {
        let (p, _, err) = try launchBearing(["run", "--board", "simulator", "--config", config.path, "--log-level", "info"])
        return (p, err)
    }

    func stop(_ p: Process, _ err: Pipe, signal: Int32 = SIGTERM) -> String {
        if p.isRunning { kill(p.processIdentifier, signal) }
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return text
    }

    func spoolState(_ dir: URL, _ device: String) -> [String: UInt64] {
        let text = (try? String(contentsOf: dir.appendingPathComponent("spool-\(device)/state"), encoding: .utf8)) ?? ""
        var out: [String: UInt64] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let v = UInt64(parts[1]) { out[String(parts[0])] = v }
        }
        return out
    }

    /// Topics, payloads in gpsd's dialect with `seq`, the retained status (`online`, `offline` on a clean
    /// stop, and the broker's last will `offline` after `kill -9`), the retained SPOOL object.
    func testTopicsRetainedStatusAndTheLastWill() throws {
        let dir = temporaryDirectory("mqtt-topics")
        defer { try? FileManager.default.removeItem(at: dir) }
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"))
        try broker.start()
        defer { broker.stop() }
        let sub = try MQTTSubscriber(.mosquittoSub, port: broker.port, topic: "fleet/t1/#", clientID: "t1-watch", output: dir.appendingPathComponent("sub.txt"))
        defer { sub.stop() }
        sub.waitUntilSubscribed(port: broker.port, topic: "fleet/t1/att")
        let config = try writeConfig(dir, broker: broker, device: "t1", mqtt: """
              prefix: fleet/t1
              topics: {att: [{op: throttle, interval: 0.2}], tpv: false, sky: false}
            """)
        let (bearing, err) = try start(config)
        XCTAssertTrue(sub.wait(timeout: 20) { $0.messages(on: "fleet/t1/att").count >= 10 && !$0.messages(on: "fleet/t1/spool").isEmpty }, sub.lines.suffix(5).joined(separator: "\n"))
        let log = stop(bearing, err)
        XCTAssertEqual(bearing.terminationStatus, 0, log)
        XCTAssertTrue(sub.wait(timeout: 10) { $0.messages(on: "fleet/t1/status").last?.payload == "offline" }, "a clean stop says offline: \(sub.lines.suffix(3))")
        XCTAssertEqual(sub.messages(on: "fleet/t1/status").map(\.payload), ["online", "offline"])

        let att = sub.messages(on: "fleet/t1/att").map(\.payload).filter { $0 != "probe" }
        let seqs = sequenceNumbers(att)
        XCTAssertEqual(seqs, Array(1...UInt64(seqs.count)), "numbered from 1 without a gap")
        for payload in att {
            // The socket's codec: the payload without `seq` is a gpsd ATT that WireMessage reads.
            let plain = payload.replacingOccurrences(of: #","seq":\d+"#, with: "", options: .regularExpression)
            let m = try WireMessage(line: plain)
            XCTAssertEqual(m.className, "ATT")
            XCTAssertNotNil(m.number("mheading"), payload)
            XCTAssertTrue(payload.hasPrefix(#"{"class":"ATT","seq":"#), payload)
        }
        let spool = try XCTUnwrap(sub.messages(on: "fleet/t1/spool").last)
        XCTAssertTrue(spool.payload.contains(#""class":"SPOOL""#) && spool.payload.contains(#""dropped":0"#), spool.payload)
        XCTAssertTrue(log.contains("MQTT: connected to \(broker.url)"), log)

        // kill -9: the broker publishes the will.
        let (second, err2) = try start(config)
        XCTAssertTrue(sub.wait(timeout: 20) { $0.messages(on: "fleet/t1/status").last?.payload == "online" })
        XCTAssertTrue(sub.wait(timeout: 20) { sequenceNumbers($0.messages(on: "fleet/t1/att").map(\.payload)).max() ?? 0 > seqs.last! + 5 },
                      "the numbers go on after a restart")
        _ = stop(second, err2, signal: SIGKILL)
        XCTAssertTrue(sub.wait(timeout: 30) { $0.messages(on: "fleet/t1/status").last?.payload == "offline" }, "the last will: \(sub.lines.suffix(3))")
        // A new subscriber gets the retained status.
        let late = try MQTTSubscriber(.paho, port: broker.port, topic: "fleet/t1/status", clientID: "t1-late", output: dir.appendingPathComponent("late.txt"))
        defer { late.stop() }
        XCTAssertTrue(late.wait(timeout: 10) { !$0.messages(on: "fleet/t1/status").isEmpty })
        XCTAssertEqual(late.messages(on: "fleet/t1/status").first?.retained, true)
        XCTAssertEqual(late.messages(on: "fleet/t1/status").first?.payload, "offline")
    }

    /// The broker stops for a while (BEARING_MQTT_OUTAGE seconds, default 16) while Bearing keeps publishing;
    /// midway Bearing is killed with SIGKILL and started again; once connected it is killed again while
    /// sending. Both subscribers (persistent sessions) get every message by sequence number, in order, none
    /// missing, and only a few twice (what was in flight).
    func testNothingIsLostWhileTheBrokerIsDownAcrossAKill9() throws {
        let outage = Double(ProcessInfo.processInfo.environment["BEARING_MQTT_OUTAGE"] ?? "") ?? 16
        let dir = temporaryDirectory("mqtt-outage")
        defer { try? FileManager.default.removeItem(at: dir) }
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"))
        try broker.start()
        defer { broker.stop() }
        let topic = "bearing/o1/att"
        let subs = [try MQTTSubscriber(.mosquittoSub, port: broker.port, topic: topic, clientID: "o1-sub", output: dir.appendingPathComponent("sub.txt")),
                    try MQTTSubscriber(.paho, port: broker.port, topic: topic, clientID: "o1-paho", output: dir.appendingPathComponent("paho.txt"))]
        defer { for s in subs { s.stop() } }
        for s in subs { s.waitUntilSubscribed(port: broker.port, topic: topic) }
        let config = try writeConfig(dir, broker: broker, device: "o1", mqtt: """
              topics: {att: [{op: throttle, interval: 0.1}], tpv: false, sky: false}
            """)
        var (bearing, err) = try start(config)
        for s in subs { XCTAssertTrue(s.wait(timeout: 20) { $0.messages(on: topic).count >= 10 }, "\(s.kind) gets messages") }

        broker.stop()
        let down = Date()
        usleep(UInt32(outage / 2 * 1e6))
        let firstLog = stop(bearing, err, signal: SIGKILL)
        XCTAssertTrue(firstLog.contains("trying again"), firstLog)
        (bearing, err) = try start(config)
        usleep(UInt32(outage / 2 * 1e6))
        try broker.start()
        let outageSeconds = Date().timeIntervalSince(down)
        usleep(3_000_000)
        // Killed again while connected and sending: only what was in flight comes again (the acknowledged mark
        // is written through at each PUBACK), not the seconds since the last saved state.
        let secondLog = stop(bearing, err, signal: SIGKILL)
        XCTAssertTrue(secondLog.contains("again after"), secondLog)
        (bearing, err) = try start(config)
        usleep(3_000_000)
        let log = stop(bearing, err)
        XCTAssertEqual(bearing.terminationStatus, 0, log)
        let last = try XCTUnwrap(spoolState(dir, "o1")["next"]) - 1
        for s in subs {
            s.wait(timeout: 30) { sequenceNumbers($0.messages(on: topic).map(\.payload)).max() ?? 0 >= last }
            let audit = SequenceAudit(sequenceNumbers(s.messages(on: topic).map(\.payload)))
            print("MQTT outage of \(Int(outageSeconds)) s with kill -9: \(s.kind): \(audit)")
            XCTAssertEqual(audit.highest, last, "\(s.kind): \(audit)")
            XCTAssertEqual(audit.missing, [], "\(s.kind): \(audit)")
            XCTAssertTrue(audit.inOrder, "\(s.kind): \(audit)")
            XCTAssertGreaterThan(Double(audit.distinct), outageSeconds * 5, "\(s.kind): messages made during the outage arrived: \(audit)")
            // At 10 Hz about one message is in flight at a time: a few duplicates for the broker's stop and the
            // second kill; up to 5 s of them (~50) if acknowledged messages were sent again.
            XCTAssertLessThanOrEqual(audit.duplicates, 8, "\(s.kind): \(audit)")
        }
        XCTAssertEqual(spoolState(dir, "o1")["dropped"], 0)
    }

    /// Past the bound the oldest messages go: a subscriber's gaps are the drops SPOOL reports — exactly, but
    /// for the messages in flight when the broker went (`unconfirmed`: it may or may not have had them) — and
    /// the log says so once for the outage.
    func testPastTheBoundTheOldestGoAndExactlyTheCountedDropsAreMissing() throws {
        let dir = temporaryDirectory("mqtt-bound")
        defer { try? FileManager.default.removeItem(at: dir) }
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"))
        try broker.start()
        defer { broker.stop() }
        let sub = try MQTTSubscriber(.mosquittoSub, port: broker.port, topic: "bearing/b1/#", clientID: "b1-sub", output: dir.appendingPathComponent("sub.txt"))
        defer { sub.stop() }
        sub.waitUntilSubscribed(port: broker.port, topic: "bearing/b1/att")
        let config = try writeConfig(dir, broker: broker, device: "b1", mqtt: """
              topics: {att: [], tpv: false, sky: false}
              spool: {directory: \(dir.appendingPathComponent("spool-b1").path), max_bytes: 256K}
            """)
        let (bearing, err) = try start(config)
        XCTAssertTrue(sub.wait(timeout: 20) { $0.messages(on: "bearing/b1/att").count >= 50 })
        broker.stop()
        usleep(12_000_000) // ~1200 ATT of ~500 bytes: twice the bound
        try broker.start()
        usleep(4_000_000)
        let log = stop(bearing, err)
        let state = spoolState(dir, "b1")
        let last = try XCTUnwrap(state["next"]) - 1
        let acked = try XCTUnwrap(state["acked"])
        let dropped = try XCTUnwrap(state["dropped"])
        let unconfirmed = try XCTUnwrap(state["unconfirmed"])
        sub.wait(timeout: 30) { sequenceNumbers($0.messages(on: "bearing/b1/att").map(\.payload)).max() ?? 0 >= acked }
        let audit = SequenceAudit(sequenceNumbers(sub.messages(on: "bearing/b1/att").map(\.payload)))
        print("MQTT spool bound 256 KiB, 12 s outage at ~100 messages/s: \(audit); SPOOL dropped \(dropped), unconfirmed \(unconfirmed); acknowledged \(acked) of \(last)")
        XCTAssertGreaterThan(dropped, 100, "the bound was exceeded: \(log)")
        // At most the window (32) was in flight when the broker went, and at most another window when the
        // spool, still at its bound after the link came back, dropped its oldest segment while sending it.
        XCTAssertLessThanOrEqual(unconfirmed, 64, "at most a window in flight at each drop of the outage")
        XCTAssertGreaterThanOrEqual(UInt64(audit.missing.count), dropped, "every counted drop is a gap: \(audit)")
        XCTAssertLessThanOrEqual(UInt64(audit.missing.count), dropped + unconfirmed, "every gap is counted, as dropped or unconfirmed: \(audit)")
        // A stop does not wait for the broker: what was spooled and not yet acknowledged when it came is sent at
        // the next start (CI 2026-12-05 on the full disk's test: 1087 spooled, 1086 arrived).
        XCTAssertGreaterThanOrEqual(audit.highest, acked, "everything acknowledged arrived: \(audit)")
        XCTAssertLessThanOrEqual(audit.highest, last)
        XCTAssertTrue(audit.inOrder)
        let reported = sub.messages(on: "bearing/b1/spool").last?.payload ?? ""
        XCTAssertTrue(reported.contains("\"dropped\":\(dropped),\"unconfirmed\":\(unconfirmed)") || dropped == 0, "SPOOL on the broker: \(reported)")
        XCTAssertEqual(log.components(separatedBy: "MQTT spool: full").count - 1, 1, "logged once for the outage: \(log)")
        // The drops the log reports for the outage add up to the spool's: those until the link came back, and
        // those while its backlog was sent (on a slow machine the spool, still full, may drop its oldest
        // segment before the broker acknowledges it; CI at 906cdd5 saw 650 logged of more counted).
        let meanwhile = numbers(in: log, before: " dropped meanwhile")
        let more = numbers(in: log, before: " more dropped while the outage's backlog was sent")
        XCTAssertEqual(meanwhile.count, 1, log)
        XCTAssertLessThanOrEqual(more.count, 1, log)
        XCTAssertEqual(meanwhile.reduce(0, +) + more.reduce(0, +), dropped, log)
    }

    /// The whole numbers just before each `suffix` in `text`.
    func numbers(in text: String, before suffix: String) -> [UInt64] {
        text.components(separatedBy: suffix).dropLast().compactMap { part in
            UInt64(String(part.reversed().prefix { $0.isNumber }.reversed()))
        }
    }

    /// A spool segment with a bad line (a bad card, a hand edit) is named in the log, set aside, never sent;
    /// the numbers go on after it.
    func testACorruptSpoolFileIsNamedSetAsideAndNotReplayed() throws {
        let dir = temporaryDirectory("mqtt-corrupt")
        defer { try? FileManager.default.removeItem(at: dir) }
        let spool = dir.appendingPathComponent("spool-c1")
        try FileManager.default.createDirectory(at: spool, withIntermediateDirectories: true)
        let filed = (1...3).map { #"{"class":"ATT","seq":\#($0),"mheading":1.0}"# }
        let good = filed.enumerated().map { SpoolRecord(seq: UInt64($0.offset + 1), topic: "bearing/c1/att", payload: $0.element).line }
        let segment = spool.appendingPathComponent("00000000000000000001.spool")
        try Data(good[0] + good[1] + Array("7\tbearing/c1/att\tGARBAGE\t00000000\n".utf8) + good[2]).write(to: segment)
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"))
        try broker.start()
        defer { broker.stop() }
        let sub = try MQTTSubscriber(.mosquittoSub, port: broker.port, topic: "bearing/c1/att", clientID: "c1-sub", output: dir.appendingPathComponent("sub.txt"))
        defer { sub.stop() }
        sub.waitUntilSubscribed(port: broker.port, topic: "bearing/c1/att")
        let config = try writeConfig(dir, broker: broker, device: "c1", mqtt: """
              topics: {att: [{op: throttle, interval: 0.2}], tpv: false, sky: false}
            """)
        let (bearing, err) = try start(config)
        XCTAssertTrue(sub.wait(timeout: 20) { $0.messages(on: "bearing/c1/att").count >= 5 })
        let log = stop(bearing, err)
        XCTAssertTrue(log.contains("\(segment.path): line 3: CRC-32 00000000 does not match"), log)
        XCTAssertTrue(log.contains("set aside as \(segment.path).corrupt"), log)
        XCTAssertTrue(FileManager.default.fileExists(atPath: segment.path + ".corrupt"))
        let payloads = sub.messages(on: "bearing/c1/att").map(\.payload)
        // The file's own payloads, whole: a live ATT's mheading may well start with 1.0.
        XCTAssertFalse(payloads.contains { $0.contains("GARBAGE") || filed.contains($0) }, "nothing of the file is sent: \(payloads)")
        XCTAssertEqual(sequenceNumbers(payloads).first, 4, "numbers go on after the set-aside file's (its good lines 1, 2 and 3): \(payloads.prefix(2))")
        XCTAssertTrue(log.contains("its 3 good unacknowledged messages are counted as dropped"), log)
    }

    /// A full disk (a 64 KiB tmpfs under the spool) while the broker is down: one clear error, the messages
    /// already spooled all arrive when the broker is back, and writing resumes once they are acknowledged.
    func testAFullDiskIsOneClearErrorAndLosesNothingSpooled() throws {
        let dir = temporaryDirectory("mqtt-full")
        defer { try? FileManager.default.removeItem(at: dir) }
        let spool = dir.appendingPathComponent("spool-f1")
        let unmount = try mountTmpfs(spool, size: "64k")
        defer { unmount() }
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"))
        try broker.start()
        let sub = try MQTTSubscriber(.paho, port: broker.port, topic: "bearing/f1/att", clientID: "f1-sub", output: dir.appendingPathComponent("sub.txt"))
        defer { sub.stop() }
        sub.waitUntilSubscribed(port: broker.port, topic: "bearing/f1/att")
        broker.stop() // the subscriber's session is kept in the broker's database
        let config = try writeConfig(dir, broker: broker, device: "f1", mqtt: """
              topics: {att: [], tpv: false, sky: false}
              spool: {directory: \(spool.path), max_bytes: 1M}
            """)
        let (bearing, err) = try start(config)
        usleep(5_000_000) // the broker is down: 64 KiB fill in about 1.5 s
        try broker.start()
        defer { broker.stop() }
        usleep(6_000_000)
        let log = stop(bearing, err)
        let state = spoolState(dir, "f1")
        let last = try XCTUnwrap(state["next"]) - 1
        let acked = try XCTUnwrap(state["acked"])
        sub.wait(timeout: 30) { sequenceNumbers($0.messages(on: "bearing/f1/att").map(\.payload)).max() ?? 0 >= acked }
        usleep(500_000)
        let seqs = sequenceNumbers(sub.messages(on: "bearing/f1/att").map(\.payload))
        let audit = SequenceAudit(seqs)
        print("MQTT spool on a full 64 KiB tmpfs: \(audit); dropped \(state["dropped"] ?? 0); acknowledged \(acked) of \(last)")
        // One error when a streak of failed writes starts and one line when it ends, not one per message. Under load
        // the backlog can fill the disk again while it drains (a second streak, told the same way).
        let streaks = log.components(separatedBy: "MQTT spool: cannot write a message: write(").count - 1
        XCTAssertGreaterThanOrEqual(streaks, 1, log)
        XCTAssertLessThanOrEqual(streaks, 3, "one error per streak, not per message: \(log)")
        XCTAssertEqual(log.components(separatedBy: "MQTT spool: writing again").count - 1, streaks, "each streak's end told: \(log)")
        XCTAssertTrue(log.contains("No space left on device"), log)
        // What was spooled before the disk filled: 1 up to the first gap, all there.
        let firstGap = try XCTUnwrap(audit.missing.first, "the full disk cost messages: \(audit)")
        XCTAssertGreaterThan(firstGap, 50)
        XCTAssertEqual(Array(seqs.prefix(Int(firstGap) - 1)), Array(1..<firstGap), "everything spooled arrived, in order")
        // The state file on the full disk may lag (it is saved when there is room); the gaps up to its numbers
        // are the drops it counts, and messages made after space came back arrived. A stop does not wait for the
        // broker: what it had not acknowledged is sent at the next start (CI 2026-12-05: 1087 spooled, 1086 arrived).
        XCTAssertGreaterThanOrEqual(audit.highest, acked, "everything acknowledged arrived: \(audit)")
        XCTAssertLessThanOrEqual(audit.highest, last)
        XCTAssertGreaterThanOrEqual(UInt64(audit.missing.count), state["dropped"] ?? 0, "\(audit)")
        XCTAssertGreaterThan(audit.highest, firstGap + 100, "writing resumed: \(audit)")
    }

    /// TLS with client certificates, from certificates made here with openssl: a good pair connects and
    /// publishes; a wrong CA, an expired broker certificate, no client certificate, a client certificate from
    /// another CA and an expired one each give an error that names the cause and the key to change.
    func testTLSWithClientCertificatesAndEachRefusalIsNamed() throws {
        let dir = temporaryDirectory("mqtt-tls")
        defer { try? FileManager.default.removeItem(at: dir) }
        let certs = try TestCertificates(in: dir.appendingPathComponent("certs"))
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"),
                                         certificates: certs)
        try broker.start()
        defer { broker.stop() }
        let expiredBroker = try MosquittoBroker(directory: dir.appendingPathComponent("broker-expired"),
                                                certificates: certs, server: "expired-server.pem")
        try expiredBroker.start()
        defer { expiredBroker.stop() }
        let sub = try MQTTSubscriber(.mosquittoSub, port: broker.port, topic: "bearing/tls/att", clientID: "tls-sub", output: dir.appendingPathComponent("sub.txt"),
                                     options: ["--cafile", certs.path("ca.pem"), "--cert", certs.path("client.pem"), "--key", certs.path("client.key")])
        defer { sub.stop() }

        func run(_ name: String, broker b: MosquittoBroker, ca: String, client: String?, seconds: Double) throws -> String {
            let cert = client.map { ", certificate: \(certs.path("\($0).pem")), key: \(certs.path($0.hasSuffix("client") && $0.hasPrefix("other") ? "other-client.key" : "client.key"))" } ?? ""
            let config = try writeConfig(dir, broker: b, device: "tls", mqtt: """
                  tls: {ca: \(certs.path(ca))\(cert)}
                  topics: {att: [{op: throttle, interval: 0.2}], tpv: false, sky: false}
                  spool: {directory: \(dir.appendingPathComponent("spool-\(name)").path)}
                """)
            let (p, err) = try start(config)
            usleep(UInt32(seconds * 1e6))
            return stop(p, err)
        }

        let good = try run("good", broker: broker, ca: "ca.pem", client: "client", seconds: 3)
        XCTAssertTrue(good.contains("MQTT: connected to mqtts://127.0.0.1:\(broker.port)"), good)
        XCTAssertTrue(sub.wait(timeout: 10) { sequenceNumbers($0.messages(on: "bearing/tls/att").map(\.payload)).count >= 5 }, "messages over TLS")

        let cases: [(name: String, broker: MosquittoBroker, ca: String, client: String?, expect: [String])] = [
            ("wrong-ca", broker, "other-ca.pem", "client", ["certificate verify failed", "does not verify against mqtt.tls.ca"]),
            ("expired-broker", expiredBroker, "ca.pem", "client", ["certificate verify failed", "expired or not yet valid"]),
            ("no-client-certificate", broker, "ca.pem", nil, ["alert certificate required", "set mqtt.tls.certificate and mqtt.tls.key"]),
            ("client-from-another-ca", broker, "ca.pem", "other-client", ["alert unknown ca", "does not trust the CA that signed the client certificate"]),
            ("expired-client", broker, "ca.pem", "expired-client", ["alert certificate expired", "refuses the client certificate (mqtt.tls.certificate) as expired"]),
        ]
        for c in cases {
            // Under load the broker's TLS alert can lose the race with its TCP reset, and the client then sees only
            // "Connection reset by peer", or libmosquitto's "Protocol error" for a connection closed before its CONNACK
            // (nothing to name): such a run is tried again, up to three times in all.
            var log = "", warnings = ""
            for attempt in 1...3 {
                log = try run("\(c.name)-\(attempt)", broker: c.broker, ca: c.ca, client: c.client, seconds: 3)
                warnings = log.split(separator: "\n").filter { $0.hasPrefix("<4>MQTT") }.joined(separator: "\n")
                let raced = warnings.contains("Connection reset by peer") || warnings.contains("Protocol error")
                if c.expect.allSatisfy(warnings.contains) || !raced { break }
                print("MQTT TLS \(c.name): only a reset by the broker on attempt \(attempt), trying again")
            }
            for phrase in c.expect { XCTAssertTrue(warnings.contains(phrase), "\(c.name): \(phrase) in a warning:\n\(log)") }
            XCTAssertFalse(log.contains("MQTT: connected"), "\(c.name): \(log)")
            print("MQTT TLS \(c.name): \(warnings.split(separator: "\n").last ?? "")")
        }
    }

    /// Home Assistant discovery: retained configs for a device_tracker and four sensors in one device,
    /// checked as HA reads them (`check_ha.py`: topic form, required keys, the value templates rendered with
    /// Jinja2 against the device's own messages, the tracker's latitude/longitude), the position retained,
    /// and the configs sent again when HA announces itself on `homeassistant/status`.
    func testHomeAssistantDiscoveryIsWhatHAReadsAndIsSentAgainWhenHAStarts() throws {
        try requireGpsfake()
        guard runPython("-c", ["import jinja2"]).status == 0 else { throw XCTSkip("SKIPPED: Python's jinja2 missing (python3-jinja2)") }
        let dir = temporaryDirectory("mqtt-ha")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (track, log) = try writeTrack(in: dir) { $0.epochs = 400 }
        let gpsdPort = freePort()
        let fake = try GPSFake(log: log, port: gpsdPort)
        defer { fake.stop() }
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"))
        try broker.start()
        defer { broker.stop() }
        let sub = try MQTTSubscriber(.paho, port: broker.port, topic: "#", clientID: "ha", output: dir.appendingPathComponent("ha.txt"))
        defer { sub.stop() }
        sub.waitUntilSubscribed(port: broker.port, topic: "probe/ha")
        let config = dir.appendingPathComponent("bearing.yaml")
        try """
            gpsd: {host: 127.0.0.1, port: \(gpsdPort), retry_initial: 0.1, retry_max: 1}
            socket: {path: \(dir.appendingPathComponent("ha.sock").path)}
            heading: {fallback_position: [50.8, -1.3, 0]}
            mqtt:
              broker: \(broker.url)
              device: ha-1
              home_assistant: true
              topics:
                tpv: [{op: min_mode, mode: 2}, {op: throttle, interval: 0.5}]
                att: [{op: throttle, interval: 0.5}]
                sky: [{op: throttle, interval: 1}]
              spool: {directory: \(dir.appendingPathComponent("spool").path)}
            """.write(to: config, atomically: true, encoding: .utf8)
        let (bearing, err) = try start(config)
        func configs() -> [(topic: String, payload: String, retained: Bool)] {
            sub.lines.compactMap { line in
                let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
                guard parts.count == 3, parts[1].hasPrefix("homeassistant/"), parts[1].hasSuffix("/config") else { return nil }
                return (String(parts[1]), String(parts[2]), parts[0] == "1")
            }
        }
        XCTAssertTrue(sub.wait(timeout: 40) {
            configs().count >= 6 && !$0.messages(on: "bearing/ha-1/position").isEmpty && !$0.messages(on: "bearing/ha-1/sky").isEmpty
                && !$0.messages(on: "bearing/ha-1/att").isEmpty
        }, "configs, position, ATT and SKY: \(sub.lines.suffix(5))")
        XCTAssertEqual(configs().count, 6, "one config per entity at the first connection")

        // HA restarts: its birth message brings the configs again.
        try broker.publish("homeassistant/status", "online")
        XCTAssertTrue(sub.wait(timeout: 10) { _ in configs().count >= 12 }, "sent again after homeassistant/status online: \(configs().count)")
        let log2 = stop(bearing, err)
        XCTAssertEqual(bearing.terminationStatus, 0, log2)

        // Live subscribers see retain false; a new subscriber gets them retained, as HA does at start.
        let late = try MQTTSubscriber(.mosquittoSub, port: broker.port, topic: "homeassistant/#", clientID: "ha-late", output: dir.appendingPathComponent("late.txt"))
        defer { late.stop() }
        XCTAssertTrue(late.wait(timeout: 10) { $0.lines.count >= 6 })
        var states: [String: String] = [:]
        for topic in ["att", "sky", "position"] { states["bearing/ha-1/\(topic)"] = sub.messages(on: "bearing/ha-1/\(topic)").last?.payload }
        let lateConfigs = late.lines.compactMap { line -> [String: Any]? in
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { return nil }
            return ["topic": String(parts[1]), "payload": String(parts[2]), "retained": parts[0] == "1"]
        }
        let messages = dir.appendingPathComponent("messages.json")
        try JSONSerialization.data(withJSONObject: ["configs": lateConfigs, "states": states]).write(to: messages)
        let check = runPython(repoRoot.appendingPathComponent("Tests/Fixtures/mqtt/check_ha.py").path, [messages.path])
        print("Home Assistant discovery check:\n\(check.output)")
        XCTAssertEqual(check.status, 0, check.output)
        XCTAssertEqual(check.output.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count, 6, check.output)

        // The position is the fix's.
        let position = try XCTUnwrap(states["bearing/ha-1/position"])
        let p = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(position.utf8)) as? [String: Double])
        let fixes = track.epochs.filter { $0.mode >= .twoD }
        XCTAssertTrue(fixes.contains { abs($0.latitude - p["latitude"]!) < 1e-6 && abs($0.longitude - p["longitude"]!) < 1e-6 }, "\(position)")
        XCTAssertNotNil(p["gps_accuracy"])
    }

    /// Chains set by the fleet: a retained message on the fleet topic changes the ATT rate at once and says
    /// so on PREFIX/pipelines/status; a bad chain or bad JSON is refused with the reason and the version in
    /// force stays; clearing the message goes back to the config; a restarted device applies the retained
    /// version when it connects.
    func testFleetPipelinesApplyAtomicallyAndABadOneNeverReplacesAWorkingOne() throws {
        let dir = temporaryDirectory("mqtt-fleet")
        defer { try? FileManager.default.removeItem(at: dir) }
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"))
        try broker.start()
        defer { broker.stop() }
        let sub = try MQTTSubscriber(.mosquittoSub, port: broker.port, topic: "bearing/fl1/#", clientID: "fl1-sub", output: dir.appendingPathComponent("sub.txt"))
        defer { sub.stop() }
        sub.waitUntilSubscribed(port: broker.port, topic: "bearing/fl1/probe")
        let config = try writeConfig(dir, broker: broker, device: "fl1", mqtt: """
              fleet_topic: bearing/fleet/pipelines
              topics: {att: [{op: throttle, interval: 1}], tpv: false, sky: false}
            """)
        func publish(_ payload: String) throws { try broker.publish("bearing/fleet/pipelines", payload, retain: true) }
        func status() -> String { sub.messages(on: "bearing/fl1/pipelines/status").last?.payload ?? "" }
        func attRate(over seconds: Double) -> Double {
            let before = sub.messages(on: "bearing/fl1/att").count
            usleep(UInt32(seconds * 1e6))
            return Double(sub.messages(on: "bearing/fl1/att").count - before) / seconds
        }
        var (bearing, err) = try start(config)
        XCTAssertTrue(sub.wait(timeout: 20) { $0.messages(on: "bearing/fl1/att").count >= 2 })
        let configRate = attRate(over: 3)
        XCTAssertLessThanOrEqual(configRate, 1.4, "the config's 1 s throttle")

        try publish(#"{"version":"v1","mqtt":{"ATT":[{"op":"throttle","interval":0.1}]}}"#)
        XCTAssertTrue(sub.wait(timeout: 10) { _ in status().contains(#""version":"v1""#) }, status())
        XCTAssertTrue(status().hasPrefix(#"{"class":"FLEET","status":"applied","version":"v1""#), status())
        let fleetRate = attRate(over: 3)
        XCTAssertGreaterThan(fleetRate, 5, "the fleet's 0.1 s throttle")

        try publish(#"{"version":"v2","mqtt":{"ATT":[{"op":"min_mode","mode":2}]}}"#)
        XCTAssertTrue(sub.wait(timeout: 10) { _ in status().contains(#""version":"v2""#) }, status())
        XCTAssertTrue(status().hasPrefix(#"{"class":"ERROR","message":"fleet pipelines \"v2\": mqtt.ATT"#), status())
        XCTAssertTrue(status().contains("does not apply to ATT") && status().contains(#""in_force":"v1""#), status())
        XCTAssertGreaterThan(attRate(over: 2), 5, "v1 stays in force")

        try publish("{not json")
        XCTAssertTrue(sub.wait(timeout: 10) { _ in status().contains("not JSON") }, status())
        XCTAssertTrue(status().contains(#""in_force":"v1""#), status())

        try publish("")
        XCTAssertTrue(sub.wait(timeout: 10) { _ in status().contains(#""status":"config""#) }, status())
        XCTAssertLessThanOrEqual(attRate(over: 3), 1.4, "back to the config")

        // Retained: a device that starts later applies it when it connects.
        try publish(#"{"version":"v3","mqtt":{"ATT":[{"op":"throttle","interval":0.2}]}}"#)
        XCTAssertTrue(sub.wait(timeout: 10) { _ in status().contains(#""version":"v3""#) }, status())
        let log = stop(bearing, err)
        XCTAssertTrue(log.contains("fleet pipelines \"v2\": mqtt.ATT"), log)
        XCTAssertTrue(log.contains("MQTT: fleet pipelines version v1 in force"), log)
        (bearing, err) = try start(config)
        let seqBefore = sequenceNumbers(sub.messages(on: "bearing/fl1/att").map(\.payload)).max() ?? 0
        XCTAssertTrue(sub.wait(timeout: 20) { sequenceNumbers($0.messages(on: "bearing/fl1/att").map(\.payload)).max() ?? 0 > seqBefore + 3 })
        let restartedRate = attRate(over: 3)
        XCTAssertGreaterThan(restartedRate, 3, "v3's 0.2 s throttle after a restart")
        let log2 = stop(bearing, err)
        XCTAssertTrue(log2.contains("fleet pipelines version v3 in force"), log2)
        print("MQTT fleet pipelines: ATT \(configRate)/s (config) → \(fleetRate)/s (v1) → refused v2 → config → \(restartedRate)/s (v3 after a restart)")
    }

    /// The fleet's named pipelines on the socket, where the config allows it: a local client watches one the
    /// fleet set and gets its rate; it may not change it; a version naming a pipeline a local client defined
    /// is refused whole; a version that drops one removes it; a device that does not allow them says so in
    /// its status; and the version in force is saved, so a restart without the broker starts with it (the
    /// broker's retained copy, once connected, changes nothing).
    func testFleetNamedPipelinesReachTheSocketWhenAllowedAndSurviveARestartWithoutTheBroker() throws {
        let dir = temporaryDirectory("mqtt-fleet-named")
        defer { try? FileManager.default.removeItem(at: dir) }
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"))
        try broker.start()
        defer { broker.stop() }
        let sub = try MQTTSubscriber(.mosquittoSub, port: broker.port, topic: "bearing/+/pipelines/status", clientID: "fn-sub", output: dir.appendingPathComponent("sub.txt"))
        defer { sub.stop() }
        sub.waitUntilSubscribed(port: broker.port, topic: "bearing/probe/pipelines/status")
        let fleet = """
              fleet_topic: bearing/fleet/pipelines
              topics: {att: [{op: throttle, interval: 1}], tpv: false, sky: false}
            """
        let allowed = try writeConfig(dir, broker: broker, device: "fn1", mqtt: fleet + "\n  fleet_named_pipelines: true")
        let notAllowed = try writeConfig(dir, broker: broker, device: "fn2", mqtt: fleet)
        func publish(_ payload: String) throws { try broker.publish("bearing/fleet/pipelines", payload, retain: true) }
        func status(_ device: String) -> String { sub.messages(on: "bearing/\(device)/pipelines/status").last?.payload ?? "" }
        let socket = dir.appendingPathComponent("fn1.sock").path
        /// Connected as soon as the socket takes a client (tried every `poll` µs).
        func connect(poll: useconds_t = 100_000) throws -> SocketClient {
            let deadline = Date().addingTimeInterval(15)
            while true {
                do { return try SocketClient(path: socket) } catch {
                    if Date() > deadline { throw error }
                    usleep(poll)
                }
            }
        }
        /// ATT per second on the socket through the named pipeline `name` (nil: the WATCH was refused).
        func attRate(_ name: String, over seconds: Double = 3, poll: useconds_t = 100_000) throws -> Double? {
            let c = try connect(poll: poll)
            c.watch(#","classes":["ATT"],"pipeline":"\#(name)""#)
            let start = Syscall.monotonicSeconds()
            var count = 0, first: Double?
            while Syscall.monotonicSeconds() - start < seconds + 6, let m = c.message(timeout: 2) {
                if m.className == "ERROR" { return nil }
                guard m.className == "ATT" else { continue }
                let now = Syscall.monotonicSeconds()
                if first == nil { first = now; continue } // the rate from the first ATT on
                count += 1
                if now - first! >= seconds { break }
            }
            guard let first else { return 0 }
            return Double(count) / max(Syscall.monotonicSeconds() - first, 0.001)
        }

        var (fn1, err1) = try start(allowed)
        let (fn2, err2) = try start(notAllowed)
        defer { _ = stop(fn2, err2) }
        // A local client's own pipeline, before the fleet says anything.
        let local = try connect()
        local.send(#"?PIPELINE={"name":"mine","ATT":[{"op":"throttle","interval":2}]};"# + "\n")
        XCTAssertTrue(local.messages(timeout: 10) { $0.className == "PIPELINES" }.last?.className == "PIPELINES")
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("pipelines-fn1.json").path), "stored in the test's own pipeline_store")

        try publish(#"{"version":"v1","pipelines":{"att2":{"ATT":[{"op":"throttle","interval":0.5}]}}}"#)
        XCTAssertTrue(sub.wait(timeout: 20) { _ in status("fn1").contains(#""v1""#) && status("fn2").contains(#""v1""#) }, status("fn1") + status("fn2"))
        XCTAssertEqual(status("fn1"), #"{"class":"FLEET","status":"applied","version":"v1","pipelines":["att2"]}"#)
        XCTAssertEqual(status("fn2"), #"{"class":"FLEET","status":"applied","version":"v1","pipelines_not_taken":"mqtt.fleet_named_pipelines is off on this device"}"#)
        let v1Rate = try XCTUnwrap(try attRate("att2"), "att2 is defined")
        XCTAssertGreaterThan(v1Rate, 1.4, "the fleet's 0.5 s throttle")
        XCTAssertLessThan(v1Rate, 2.6, "the fleet's 0.5 s throttle")
        local.send(#"?PIPELINES;"# + "\n")
        let listing = local.messages(timeout: 10) { $0.className == "PIPELINES" }.last
        XCTAssertTrue(listing?.line.contains(#""name":"att2","origin":"fleet""#) ?? false, listing?.line ?? "no PIPELINES")
        local.send(#"?PIPELINE={"name":"att2","ATT":[]};"# + "\n")
        let refusal = local.messages(timeout: 10) { $0.className == "ERROR" }.last
        XCTAssertTrue(refusal?.line.contains(#"\"att2\" is set by the fleet"#) ?? false, refusal?.line ?? "no ERROR")

        // A version that would take the local client's name is refused whole; v1 stays.
        try publish(#"{"version":"v2","mqtt":{"ATT":[{"op":"throttle","interval":0.1}]},"pipelines":{"mine":{"ATT":[]}}}"#)
        XCTAssertTrue(sub.wait(timeout: 10) { _ in status("fn1").contains(#""v2""#) }, status("fn1"))
        XCTAssertTrue(status("fn1").hasPrefix(#"{"class":"ERROR","message":"fleet pipelines \"v2\": pipelines.mine: defined by a local client"#), status("fn1"))
        XCTAssertTrue(status("fn1").contains(#""in_force":"v1""#), status("fn1"))
        XCTAssertNotNil(try attRate("att2", over: 1), "v1's att2 stays")

        // v3 drops att2 and brings att5.
        try publish(#"{"version":"v3","pipelines":{"att5":{"ATT":[{"op":"throttle","interval":0.2}]}}}"#)
        XCTAssertTrue(sub.wait(timeout: 10) { _ in status("fn1").contains(#""v3""#) }, status("fn1"))
        XCTAssertNil(try attRate("att2", over: 1), "att2 is gone with v3")
        XCTAssertGreaterThan(try XCTUnwrap(try attRate("att5")), 3.5, "v3's 0.2 s throttle")

        // A restart while the broker is down starts with the saved v3.
        broker.stop()
        let log1 = stop(fn1, err1)
        XCTAssertTrue(log1.contains("pipelines.mine: defined by a local client"), log1)
        (fn1, err1) = try start(allowed)
        // Asked the moment the socket takes a client: the daemon answers no request before every door is open, so
        // the saved version is in force by then (a WATCH in the first milliseconds was refused once in CI under load).
        let offlineRate = try XCTUnwrap(try attRate("att5", poll: 200), "att5 from the saved version, without the broker")
        XCTAssertGreaterThan(offlineRate, 3.5, "the saved v3's 0.2 s throttle")
        try broker.start()
        usleep(4_000_000) // connected again (retry_max 1 s), and the broker's retained v3 delivered
        let log2 = stop(fn1, err1)
        XCTAssertTrue(log2.contains("MQTT: fleet pipelines version v3 in force (saved; until the broker says otherwise)"), log2)
        XCTAssertTrue(log2.contains("MQTT: connected to"), log2)
        XCTAssertEqual(log2.components(separatedBy: "fleet pipelines version v3 in force").count - 1, 1, "the broker's retained copy of v3 changes nothing: \(log2)")
        print("MQTT fleet named pipelines: att2 \(v1Rate)/s (v1), v2 refused (a local name), att5 \(offlineRate)/s after a restart without the broker")
    }

    /// The README's mosquitto ACL, as written there, on a broker with users: a device publishes under its own
    /// prefix and reads the fleet topic; another device can neither set the fleet's chains nor write under the
    /// first one's prefix; the operator account sets them. Bearing obeys only its configured fleet topic, and a
    /// wrong password is a warning that says the broker refused it.
    func testTheREADMEsACLLetsOnlyTheOperatorSetTheFleetsChains() throws {
        let readme = try String(contentsOf: repoRoot.appendingPathComponent("docs/mqtt.md"), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let aclStart = try XCTUnwrap(readme.firstIndex { $0.hasPrefix("# /etc/mosquitto/acl") }, "the README's ACL block")
        let acl = readme[aclStart...].prefix { !$0.hasPrefix("```") }.joined(separator: "\n") + "\n"
        let dir = temporaryDirectory("mqtt-acl")
        defer { try? FileManager.default.removeItem(at: dir) }
        let users = ["fleet-operator": "op-secret", "acl1": "acl1-secret", "acl2": "acl2-secret"]
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"), users: users, acl: acl)
        try broker.start()
        defer { broker.stop() }
        let operatorLogin = ["-u", "fleet-operator", "-P", "op-secret"]
        let sub = try MQTTSubscriber(.mosquittoSub, port: broker.port, topic: "bearing/#", clientID: "acl-operator", output: dir.appendingPathComponent("sub.txt"), options: operatorLogin)
        defer { sub.stop() }
        sub.waitUntilSubscribed(port: broker.port, topic: "bearing/fleet/probe", options: operatorLogin)
        func publish(_ topic: String, _ payload: String, as user: String) throws {
            XCTAssertEqual(try broker.publish(topic, payload, login: ["-u", user, "-P", users[user]!]), 0, "mosquitto_pub as \(user) to \(topic)")
        }
        func status() -> String { sub.messages(on: "bearing/acl1/pipelines/status").last?.payload ?? "" }
        let password = dir.appendingPathComponent("acl1-password")
        try "acl1-secret\n".write(to: password, atomically: true, encoding: .utf8)
        let config = try writeConfig(dir, broker: broker, device: "acl1", mqtt: """
              username: acl1
              password_file: \(password.path)
              fleet_topic: bearing/fleet/pipelines
              topics: {att: [{op: throttle, interval: 0.5}], tpv: false, sky: false}
            """)
        let (bearing, err) = try start(config)
        XCTAssertTrue(sub.wait(timeout: 20) { $0.messages(on: "bearing/acl1/att").count >= 2 }, "acl1 writes under its own prefix")
        XCTAssertEqual(sub.messages(on: "bearing/acl1/status").last?.payload, "online")

        // Another device: not the fleet's chains, not acl1's topics. mosquitto acknowledges and drops them.
        try publish("bearing/fleet/pipelines", #"{"version":"forged","mqtt":{"ATT":[{"op":"throttle","interval":0.1}]}}"#, as: "acl2")
        try publish("bearing/acl1/att", #"{"class":"ATT","seq":999999,"heading":1}"#, as: "acl2")
        // A topic this device does not obey, by the operator.
        try publish("bearing/fleet/other", #"{"version":"elsewhere","mqtt":{"ATT":[{"op":"throttle","interval":0.1}]}}"#, as: "fleet-operator")
        // The operator's version on the fleet topic: applied.
        try publish("bearing/fleet/pipelines", #"{"version":"op1","mqtt":{"ATT":[{"op":"throttle","interval":0.25}]}}"#, as: "fleet-operator")
        XCTAssertTrue(sub.wait(timeout: 10) { _ in status().contains(#""op1""#) }, status())
        XCTAssertEqual(status(), #"{"class":"FLEET","status":"applied","version":"op1"}"#)
        let statuses = sub.messages(on: "bearing/acl1/pipelines/status").map(\.payload)
        XCTAssertFalse(statuses.contains { $0.contains("forged") || $0.contains("elsewhere") }, "\(statuses)")
        XCTAssertFalse(sub.messages(on: "bearing/fleet/pipelines").contains { $0.payload.contains("forged") }, "the broker dropped acl2's fleet message")
        XCTAssertFalse(sub.messages(on: "bearing/acl1/att").contains { $0.payload.contains("999999") }, "the broker dropped acl2's ATT under acl1")
        XCTAssertTrue(sub.wait(timeout: 5) { $0.messages(on: "bearing/fleet/pipelines").contains { $0.payload.contains("op1") } },
                      "the subscriber reads the fleet topic, so acl2's message would have shown there")
        let log = stop(bearing, err)
        XCTAssertTrue(log.contains("MQTT: fleet pipelines version op1 in force"), log)
        XCTAssertFalse(log.contains("forged") || log.contains("elsewhere"), log)

        // A wrong password: the broker refuses, and the warning says so.
        try "wrong\n".write(to: password, atomically: true, encoding: .utf8)
        let (refused, refusedErr) = try start(config)
        usleep(3_000_000)
        let refusedLog = stop(refused, refusedErr)
        XCTAssertTrue(refusedLog.split(separator: "\n").contains { $0.hasPrefix("<4>MQTT") && $0.contains("not authorised: the broker does not accept this user and password: check mqtt.username and mqtt.password_file") }, refusedLog)
        XCTAssertFalse(refusedLog.contains("wrong"), "the password is never logged")
        print("MQTT ACL (README's): acl2's fleet message and its ATT under acl1 denied by the broker; the operator's op1 applied; \(refusedLog.split(separator: "\n").first { $0.contains("not authorised") } ?? "")")
    }

    /// Past one broker: Bearing → an edge mosquitto → a bridge → a central mosquitto → a subscriber. The
    /// central broker stops (the edge queues for its bridge), then the edge itself stops and restarts (Bearing
    /// spools): the subscriber on the central broker still gets every message. Not in order: MQTT orders what one
    /// client sends again (3.1.1 §4.6, [MQTT-4.6.0-1]), which "isn't covered" over more than one hop
    /// (paho.mqtt.c#807, its maintainer), and here two brokers each resume a session after a restart. Both brokers
    /// run at `max_inflight_messages 1`, the setting mosquitto.conf(5) gives for in-order QoS 1 delivery, and still:
    /// 1 late first arrival (CI, 2026-11-29, at the default 20), then runs out of order under load at 1, and 65 of
    /// 193 late in CI on 2026-12-01, against a bound of 5 reasoned from one in-flight message per broker. So order
    /// is asked of Bearing's own hop (`testNothingIsLostWhileTheBrokerIsDownAcrossAKill9`: in order through an
    /// outage and two `kill -9`s) and this test asks that nothing is lost and prints how many came late. Each
    /// message carries its `seq`, by which a consumer past a bridge puts them back in order.
    func testThroughAMosquittoBridgeNothingIsLostWhenEitherBrokerStops() throws {
        let dir = temporaryDirectory("mqtt-bridge")
        defer { try? FileManager.default.removeItem(at: dir) }
        let central = try MosquittoBroker(directory: dir.appendingPathComponent("central"), extraConfig: "max_inflight_messages 1")
        try central.start()
        defer { central.stop() }
        let edge = try MosquittoBroker(directory: dir.appendingPathComponent("edge"), extraConfig: """
            max_inflight_messages 1
            connection central
            address 127.0.0.1:\(central.port)
            topic bearing/# out 1
            cleansession false
            remote_clientid edge-1
            bridge_protocol_version mqttv311
            try_private false
            restart_timeout 1 2
            keepalive_interval 10
            """)
        try edge.start()
        defer { edge.stop() }
        let topic = "bearing/br1/att"
        let sub = try MQTTSubscriber(.paho, port: central.port, topic: topic, clientID: "central-sub", output: dir.appendingPathComponent("sub.txt"))
        defer { sub.stop() }
        sub.waitUntilSubscribed(port: central.port, topic: topic)
        let config = try writeConfig(dir, broker: edge, device: "br1", mqtt: """
              topics: {att: [{op: throttle, interval: 0.1}], tpv: false, sky: false}
            """)
        let (bearing, err) = try start(config)
        XCTAssertTrue(sub.wait(timeout: 30) { sequenceNumbers($0.messages(on: topic).map(\.payload)).count >= 10 }, "through the bridge: \(edge.log.suffix(800))")
        central.stop()
        usleep(5_000_000)
        try central.start()
        usleep(3_000_000)
        edge.stop()
        usleep(5_000_000)
        try edge.start()
        usleep(5_000_000)
        let log = stop(bearing, err)
        XCTAssertEqual(bearing.terminationStatus, 0, log)
        let last = try XCTUnwrap(spoolState(dir, "br1")["next"]) - 1
        sub.wait(timeout: 30) { sequenceNumbers($0.messages(on: topic).map(\.payload)).max() ?? 0 >= last }
        let audit = SequenceAudit(sequenceNumbers(sub.messages(on: topic).map(\.payload)))
        print("MQTT through a bridge, central down 5 s then edge down 5 s: \(audit)")
        XCTAssertEqual(audit.highest, last, "\(audit)")
        XCTAssertEqual(audit.missing, [], "\(audit)")
        XCTAssertGreaterThan(audit.distinct, 150, "\(audit)")
    }

    /// The audit the door tests judge a subscriber by: a message seen again is a duplicate, not a late one; a first
    /// arrival below one already seen is late; the gaps are missing.
    func testTheSequenceAuditTellsDuplicatesFromLateArrivals() {
        let audit = SequenceAudit([1, 2, 4, 3, 4, 2, 6, 5, 7])
        XCTAssertEqual(audit.duplicates, 2)
        XCTAssertEqual(audit.late, 2, "3 after 4, 5 after 6")
        XCTAssertFalse(audit.inOrder)
        XCTAssertEqual(audit.missing, [])
        XCTAssertEqual(audit.highest, 7)
        let clean = SequenceAudit([1, 2, 2, 3, 5])
        XCTAssertTrue(clean.inOrder)
        XCTAssertEqual(clean.late, 0)
        XCTAssertEqual(clean.missing, [4])
    }

    /// `bearing watch --mqtt URL`: the fleet's devices, live, a line per message with the device's name.
    func testWatchShowsTheFleetFromTheBroker() throws {
        let dir = temporaryDirectory("mqtt-watch")
        defer { try? FileManager.default.removeItem(at: dir) }
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"))
        try broker.start()
        defer { broker.stop() }
        let config = try writeConfig(dir, broker: broker, device: "w1", mqtt: """
              topics: {att: [{op: throttle, interval: 0.2}], tpv: false, sky: false}
            """)
        let (bearing, err) = try start(config)
        defer { _ = stop(bearing, err) }
        let (watch, out, watchErr) = try launchBearing(["watch", "--mqtt", broker.url, "--count", "8"])
        let deadline = Date().addingTimeInterval(30)
        while watch.isRunning && Date() < deadline { usleep(50_000) }
        if watch.isRunning { kill(watch.processIdentifier, SIGKILL) }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errText = String(decoding: watchErr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        watch.waitUntilExit()
        XCTAssertEqual(watch.terminationStatus, 0, errText)
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.count, 8, text)
        XCTAssertTrue(lines.contains { $0 == "w1  online (retained)" || $0 == "w1  online" }, text)
        XCTAssertTrue(lines.contains { $0.hasPrefix("w1  ATT  ") && $0.contains("° magnetic") && $0.contains("  #") }, text)
        XCTAssertTrue(errText.contains("connected to \(broker.url)"), errText)
    }
}
