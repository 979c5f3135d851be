import BearingModel
import BearingPOSIX
import BearingMQTT
import Foundation
import DaemonTestRig
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The fleet topic misused (issue 26): a device's own status topic, two devices reading each other's, a
/// message of 50 MB; and a broker that closes the connection inside a packet.
extension MQTTDoorTests {
    /// Waits up to `timeout` s for `p` to exit.
    func waitForExit(_ p: Process, timeout: Double) -> Bool {
        let deadline = Syscall.monotonicSeconds() + timeout
        while p.isRunning && Syscall.monotonicSeconds() < deadline { usleep(20_000) }
        return !p.isRunning
    }

    /// A process's peak resident memory (VmHWM), in KiB.
    func peakResidentKiB(_ p: Process) -> Int? {
        let status = (try? String(contentsOfFile: "/proc/\(p.processIdentifier)/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }.flatMap { line in
            line.split(separator: " ").compactMap { Int($0) }.first
        }
    }

    /// The lines of `log` that contain `text`.
    func count(_ text: String, in log: String) -> Int { log.split(separator: "\n").filter { $0.contains(text) }.count }

    /// `mqtt.fleet_topic` set to the device's own `PREFIX/pipelines/status` used to loop for ever (each refusal,
    /// published there retained, came back as a fleet message): the config is refused, the daemon never starts.
    func testAFleetTopicTheDevicePublishesToStopsTheStart() throws {
        let dir = temporaryDirectory("mqtt-own-fleet")
        defer { try? FileManager.default.removeItem(at: dir) }
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"))
        try broker.start()
        defer { broker.stop() }
        try broker.publish("bearing/of1/pipelines/status", "{not json", retain: true)
        let config = try writeConfig(dir, broker: broker, device: "of1", mqtt: """
              fleet_topic: bearing/of1/pipelines/status
              topics: {att: [{op: throttle, interval: 0.5}], tpv: false, sky: false}
            """)
        let (bearing, err) = try start(config)
        let exited = waitForExit(bearing, timeout: 15)
        let log = stop(bearing, err)
        XCTAssertTrue(exited, "still running: \(log.prefix(2000))")
        XCTAssertEqual(bearing.terminationStatus, 78, "a config error (EX_CONFIG)")
        XCTAssertTrue(log.contains("mqtt.fleet_topic: \"bearing/of1/pipelines/status\" is not allowed; this device publishes to (bearing/of1/pipelines/status)"), String(log.prefix(2000)))
        XCTAssertLessThan(log.utf8.count, 4000, String(log.prefix(2000)))
    }

    /// Two devices each reading the other's status topic as their fleet topic used to answer each other's
    /// refusals for ever (thousands of log lines a second). Bearing's own objects are ignored: one refusal of
    /// the message published there, one notice on the other device, and both go on publishing; the same after
    /// a restart with the ERROR retained.
    func testTwoDevicesReadingEachOthersStatusDoNotLoop() throws {
        let dir = temporaryDirectory("mqtt-fleet-loop")
        defer { try? FileManager.default.removeItem(at: dir) }
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"))
        try broker.start()
        defer { broker.stop() }
        let sub = try MQTTSubscriber(.mosquittoSub, port: broker.port, topic: "bearing/#", clientID: "loop-sub", output: dir.appendingPathComponent("sub.txt"))
        defer { sub.stop() }
        sub.waitUntilSubscribed(port: broker.port, topic: "bearing/probe")
        func config(_ device: String, reads other: String) throws -> URL {
            try writeConfig(dir, broker: broker, device: device, mqtt: """
                  fleet_topic: bearing/\(other)/pipelines/status
                  topics: {att: [{op: throttle, interval: 0.2}], tpv: false, sky: false}
                """)
        }
        let c1 = try config("lp1", reads: "lp2"), c2 = try config("lp2", reads: "lp1")
        var (b1, e1) = try start(c1)
        let (b2, e2) = try start(c2)
        func att(_ device: String) -> Int { sub.messages(on: "bearing/\(device)/att").count }
        XCTAssertTrue(sub.wait(timeout: 20) { _ in att("lp1") >= 2 && att("lp2") >= 2 }, "both publish")

        // Not a fleet message: lp2 refuses it, and its ERROR reaches lp1 as lp1's fleet message.
        try broker.publish("bearing/lp1/pipelines/status", "{not json", retain: true)
        XCTAssertTrue(sub.wait(timeout: 10) { $0.messages(on: "bearing/lp2/pipelines/status").contains { $0.payload.contains("not JSON") } })
        // Both go on publishing for a few more seconds (15 ATT at 5 Hz each).
        let (a1, a2) = (att("lp1"), att("lp2"))
        XCTAssertTrue(sub.wait(timeout: 20) { _ in att("lp1") >= a1 + 15 && att("lp2") >= a2 + 15 }, "both still publish")
        var log1 = stop(b1, e1)
        let log2 = stop(b2, e2)
        XCTAssertEqual(b1.terminationStatus, 0, String(log1.suffix(2000)))
        XCTAssertEqual(b2.terminationStatus, 0, String(log2.suffix(2000)))
        XCTAssertEqual(count("fleet pipelines: not JSON", in: log2), 1, String(log2.suffix(2000)))
        XCTAssertEqual(count("fleet pipelines", in: log1), 0, "lp1 refused nothing: \(log1.suffix(2000))")
        XCTAssertEqual(count("holds a Bearing status object, not a fleet message: ignored", in: log1), 1, String(log1.suffix(2000)))
        // About 20 start and stop lines each (one per calibration file among them): no loop's worth.
        XCTAssertLessThan(log1.split(separator: "\n").count + log2.split(separator: "\n").count, 44, "\(log1.suffix(1000))\n\(log2.suffix(1000))")
        XCTAssertEqual(sub.messages(on: "bearing/lp1/pipelines/status").map(\.payload), ["{not json"], "lp1 published no status")
        XCTAssertEqual(sub.messages(on: "bearing/lp2/pipelines/status").count, 1, "lp2 refused once")

        // A restart with lp2's ERROR retained on lp1's fleet topic: ignored again.
        (b1, e1) = try start(c1)
        let a1Restart = att("lp1")
        XCTAssertTrue(sub.wait(timeout: 20) { _ in att("lp1") >= a1Restart + 10 })
        log1 = stop(b1, e1)
        XCTAssertEqual(count("holds a Bearing status object, not a fleet message: ignored", in: log1), 1, String(log1.suffix(2000)))
        XCTAssertEqual(count("fleet pipelines", in: log1), 0, String(log1.suffix(2000)))
        XCTAssertEqual(sub.messages(on: "bearing/lp1/pipelines/status").count, 1)
        print("MQTT two devices reading each other's status: \(log1.split(separator: "\n").count) + \(log2.split(separator: "\n").count) log lines, 1 refusal")
    }

    /// A fleet message over 64 KiB is refused by its size before it is read: a status of a few hundred bytes
    /// names the size, the version in force stays (its rate, its saved copy). A 50 MB one is not even sent: the
    /// door's MQTT 5 CONNECT says the largest packet it takes, so mosquitto drops it, and the daemon's peak
    /// memory does not grow by 8 MB (with 3.1.1 libmosquitto read the packet whole first: bench/mqtt-peak).
    func testAnOversizedFleetMessageIsRefusedByItsSizeAndNotCopied() throws {
        let dir = temporaryDirectory("mqtt-fleet-size")
        defer { try? FileManager.default.removeItem(at: dir) }
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"))
        try broker.start()
        defer { broker.stop() }
        let sub = try MQTTSubscriber(.mosquittoSub, port: broker.port, topic: "bearing/fs1/#", clientID: "fs1-sub", output: dir.appendingPathComponent("sub.txt"))
        defer { sub.stop() }
        sub.waitUntilSubscribed(port: broker.port, topic: "bearing/fs1/probe")
        let config = try writeConfig(dir, broker: broker, device: "fs1", mqtt: """
              fleet_topic: bearing/fleet/pipelines
              topics: {att: [{op: throttle, interval: 1}], tpv: false, sky: false}
            """)
        func status() -> String { sub.messages(on: "bearing/fs1/pipelines/status").last?.payload ?? "" }
        func attRate(over seconds: Double) -> Double {
            let before = sub.messages(on: "bearing/fs1/att").count
            usleep(UInt32(seconds * 1e6))
            return Double(sub.messages(on: "bearing/fs1/att").count - before) / seconds
        }
        /// Publishes `size` bytes: a valid version padded with spaces (so only its size is wrong).
        func publishPadded(_ version: String, size: Int) throws {
            let body = #"{"version":"\#(version)","mqtt":{"ATT":[{"op":"throttle","interval":0.5}]}}"#
            let file = dir.appendingPathComponent("\(version).json")
            try Data((body + String(repeating: " ", count: size - body.utf8.count)).utf8).write(to: file)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
            p.arguments = ["-h", "127.0.0.1", "-p", String(broker.port), "-t", "bearing/fleet/pipelines", "-q", "1", "-f", file.path]
            try p.run()
            p.waitUntilExit()
            XCTAssertEqual(p.terminationStatus, 0)
        }
        let (bearing, err) = try start(config)
        XCTAssertTrue(sub.wait(timeout: 20) { $0.messages(on: "bearing/fs1/att").count >= 2 })
        let v1 = #"{"version":"v1","mqtt":{"ATT":[{"op":"throttle","interval":0.1}]}}"#
        try broker.publish("bearing/fleet/pipelines", v1, retain: true)
        XCTAssertTrue(sub.wait(timeout: 10) { _ in status().contains(#""status":"applied","version":"v1""#) }, status())
        let saved = dir.appendingPathComponent("spool-fs1/fleet.json")
        XCTAssertEqual(try String(contentsOf: saved, encoding: .utf8), v1)

        // Just over the bound: refused, naming the size.
        try publishPadded("big", size: FleetPipelines.maxMessageBytes + 1)
        XCTAssertTrue(sub.wait(timeout: 10) { _ in status().contains("\(FleetPipelines.maxMessageBytes + 1) bytes") }, status())
        XCTAssertTrue(status().hasPrefix(#"{"class":"ERROR""#) && status().contains(#""in_force":"v1""#), status())
        XCTAssertLessThan(status().utf8.count, 400, status())

        // 50 MB: the broker drops it (Maximum Packet Size), so Bearing neither receives nor answers it.
        let before = try XCTUnwrap(peakResidentKiB(bearing))
        let huge = 50 << 20
        try publishPadded("huge", size: huge)
        let deadline = Syscall.monotonicSeconds() + 30
        while !broker.log.contains("Dropping too large outgoing PUBLISH for bearing-fs1") && Syscall.monotonicSeconds() < deadline { usleep(50_000) }
        XCTAssertTrue(broker.log.contains("Dropping too large outgoing PUBLISH for bearing-fs1"), String(broker.log.suffix(1500)))
        usleep(1_000_000)
        let after = try XCTUnwrap(peakResidentKiB(bearing))
        XCTAssertFalse(status().contains("\(huge) bytes"), status())
        XCTAssertTrue(status().contains("\(FleetPipelines.maxMessageBytes + 1) bytes"), "the status is still the last refusal's: \(status())")
        XCTAssertTrue(status().contains(#""in_force":"v1""#), status())
        XCTAssertLessThan(status().utf8.count, 400, status())
        XCTAssertGreaterThan(attRate(over: 2), 5, "v1's 0.1 s throttle stays in force")
        XCTAssertEqual(try String(contentsOf: saved, encoding: .utf8), v1, "the saved copy is v1's")
        let log = stop(bearing, err)
        XCTAssertEqual(bearing.terminationStatus, 0, String(log.suffix(2000)))
        XCTAssertLessThan(log.utf8.count, 8000, "the log quotes no payload: \(log.prefix(2000))")
        let grownMB = Double(after - before) / 1024
        print("MQTT fleet message of 50 MB: peak RSS \(before / 1024) MB → \(after / 1024) MB (+\(Int(grownMB)) MB)")
        // With 3.1.1, libmosquitto held the packet and the message (2 × 50 MB) while Bearing was called.
        XCTAssertLessThan(grownMB, 8, "peak RSS \(before / 1024) MB → \(after / 1024) MB")
    }

    /// A broker that closes the connection inside a packet (a PUBLISH cut short): libmosquitto reports
    /// MOSQ_ERR_ERRNO with errno 0, which used to be logged as "connection lost: Success".
    func testABrokerClosingInsideAPacketIsSaidSo() throws {
        let dir = temporaryDirectory("mqtt-cut")
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = freePort()
        // CONNACK (MQTT 5's: flags, reason code, no properties), then the first 8 of a PUBLISH's 64 bytes, then a
        // clean close (everything sent is read first, so the close is a FIN, not a reset).
        let script = """
            import socket, sys, time
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(5); s.settimeout(20)
            for _ in range(2):
                c, _ = s.accept(); c.settimeout(0.3)
                c.recv(1000); c.sendall(b"\\x20\\x03\\x00\\x00\\x00\\x30\\x40\\x00\\x03abcdef")
                try:
                    while c.recv(65536): pass
                except socket.timeout: pass
                c.shutdown(socket.SHUT_WR); time.sleep(0.2); c.close()
            """
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = ["-c", script, String(port)]
        try server.run()
        defer { if server.isRunning { kill(server.processIdentifier, SIGTERM) }; server.waitUntilExit() }
        let config = dir.appendingPathComponent("bearing.yaml")
        try """
            gpsd: {host: 127.0.0.1, port: \(freePort()), retry_initial: 1, retry_max: 5}
            socket: {path: \(dir.appendingPathComponent("c.sock").path)}
            pipeline_store: \(dir.appendingPathComponent("pipelines.json").path)
            mqtt:
              broker: mqtt://127.0.0.1:\(port)
              device: cut1
              retry_initial: 0.2
              retry_max: 1
              spool: {directory: \(dir.appendingPathComponent("spool").path)}
            """.write(to: config, atomically: true, encoding: .utf8)
        let (bearing, err) = try start(config)
        XCTAssertTrue(waitForExit(server, timeout: 20), "the fake broker saw two connections")
        let log = stop(bearing, err)
        XCTAssertTrue(log.contains("connection lost: the broker closed the connection"), String(log.suffix(2000)))
        XCTAssertFalse(log.contains("Success"), String(log.suffix(2000)))
    }
}
