@testable import BearingMQTT
import BearingDaemon
import BearingModel
import BearingPOSIX
import BearingPublishing
import BearingService
import BearingWire
import DaemonTestRig
import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Issue 40, part 3: a fleet message too large for Bearing is not even received. With an MQTT 5 broker the
/// door's CONNECT says the largest packet it takes (Maximum Packet Size), so mosquitto drops a 20 MB retained
/// fleet message instead of sending it; a valid one, as large as a fleet message may be, still arrives and
/// applies. A broker that speaks MQTT 3.1.1 only (it refuses MQTT 5's CONNECT) is used with 3.1.1, said once.
final class FleetPacketBoundTests: XCTestCase {
    static let fleetTopic = "bearing/fleet/pipelines"

    /// A door for `device` on `broker` (fleet topic set, ATT only), its log captured.
    func makeDoor(_ dir: URL, device: String, port: Int, log: LogCapture) throws -> MQTTDoor {
        var config = makeAgentConfig(gpsdPort: 1, dir: dir)
        config.mqtt.spoolDirectory = dir.appendingPathComponent("spool-\(device)").path
        config.mqtt.device = device
        config.mqtt.fleetTopic = Self.fleetTopic
        config.mqtt.topics = [.att: []]
        config.mqtt.retryInitial = 0.2
        config.mqtt.retryMax = 1
        let core = PublishingCore(defaults: config.pipelines, release: Release.wireRelease)
        return try MQTTDoor(config.mqtt, broker: MQTTBroker(host: "127.0.0.1", port: port, tls: false), core: core,
                            logger: log.logger, machineIDFile: "/nonexistent")
    }

    /// Publishes `size` bytes, retained, at QoS 1 on the fleet topic: a valid version padded with spaces (so only
    /// its size can be wrong), with mosquitto_pub.
    func publishPadded(_ broker: MosquittoBroker, _ dir: URL, version: String, size: Int) throws {
        let body = #"{"version":"\#(version)","mqtt":{"ATT":[{"op":"throttle","interval":0.5}]}}"#
        let file = dir.appendingPathComponent("\(version).json")
        try Data((body + String(repeating: " ", count: size - body.utf8.count)).utf8).write(to: file)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
        p.arguments = ["-h", "127.0.0.1", "-p", String(broker.port), "-t", Self.fleetTopic, "-q", "1", "-r", "-f", file.path]
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "mosquitto_pub of \(size) bytes")
    }

    func waitFor(_ timeout: Double, _ done: () -> Bool) -> Bool {
        let deadline = Syscall.monotonicSeconds() + timeout
        while Syscall.monotonicSeconds() < deadline {
            if done() { return true }
            usleep(50_000)
        }
        return done()
    }

    func health(_ door: MQTTDoor, _ key: String) -> HealthValue? { door.health.first { $0.0 == key }?.1 }

    /// Runs `door` (as the daemon's service group does) until the returned call, which stops it and says
    /// whether its run ended within 15 s.
    func run(_ door: MQTTDoor) -> () -> Bool {
        let shutdown = ShutdownEvent()
        let ended = DispatchSemaphore(value: 0)
        Task {
            do { try await door.run(until: shutdown) } catch { XCTFail("the door's run: \(error)") }
            ended.signal()
        }
        return {
            Task { await shutdown.fire() }
            return ended.wait(timeout: .now() + 15) == .success
        }
    }

    func testAnMQTT5BrokerNeverSendsAFleetMessageOverTheBound() throws {
        let dir = temporaryDirectory("mqtt5-bound")
        defer { try? FileManager.default.removeItem(at: dir) }
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"))
        try broker.start()
        defer { broker.stop() }
        let sub = try MQTTSubscriber(.mosquittoSub, port: broker.port, topic: "bearing/mp1/#", clientID: "mp1-sub", output: dir.appendingPathComponent("sub.txt"))
        defer { sub.stop() }
        sub.waitUntilSubscribed(port: broker.port, topic: "bearing/mp1/probe")
        func statuses() -> [String] { sub.messages(on: "bearing/mp1/pipelines/status").map(\.payload) }

        // 20 MB retained on the fleet topic before the device connects: the broker sends it at the SUBSCRIBE.
        let huge = 20 << 20
        try publishPadded(broker, dir, version: "huge", size: huge)
        let log = LogCapture()
        let door = try makeDoor(dir, device: "mp1", port: broker.port, log: log)
        let stop = run(door)

        XCTAssertTrue(sub.wait(timeout: 15) { $0.messages(on: "bearing/mp1/status").contains { $0.payload == "online" } }, "the door connects")
        // mosquitto says so when a client's Maximum Packet Size keeps a message from it.
        XCTAssertTrue(waitFor(10) { broker.log.contains("Dropping too large outgoing PUBLISH for bearing-mp1") },
                      "the broker sent the 20 MB message: \(broker.log.suffix(1500))")
        usleep(1_500_000)
        XCTAssertEqual(statuses(), [], "Bearing received the 20 MB message and answered it")
        XCTAssertFalse(log.lines.contains { $0.contains("fleet pipelines: the message is") }, log.lines.joined(separator: "\n"))
        XCTAssertEqual(health(door, "protocol"), .string("5"), "\(door.health)")
        XCTAssertFalse(log.lines.contains { $0.contains("3.1.1") }, log.lines.joined(separator: "\n"))

        // A valid message still arrives and applies, even one as large as a fleet message may be.
        try broker.publish(Self.fleetTopic, #"{"version":"v1","mqtt":{"ATT":[{"op":"throttle","interval":0.1}]}}"#, retain: true)
        XCTAssertTrue(sub.wait(timeout: 10) { _ in statuses().last?.contains(#""status":"applied","version":"v1""#) ?? false }, "\(statuses())")
        try publishPadded(broker, dir, version: "v2", size: FleetPipelines.maxMessageBytes)
        XCTAssertTrue(sub.wait(timeout: 10) { _ in statuses().last?.contains(#""status":"applied","version":"v2""#) ?? false },
                      "a message of exactly \(FleetPipelines.maxMessageBytes) bytes is delivered: \(statuses()); \(broker.log.suffix(1500))")
        XCTAssertTrue(log.lines.contains { $0.contains("fleet pipelines version v2 in force") }, log.lines.joined(separator: "\n"))

        XCTAssertTrue(stop(), "the door stops")
        XCTAssertEqual(statuses().filter { $0.contains("\(huge) bytes") }, [])
    }

    /// A broker that speaks MQTT 3.1.1 only: answers MQTT 5's CONNECT with 3.1.1's CONNACK 1 (unacceptable
    /// protocol version), then takes 3.1.1. The door connects again at once with 3.1.1, keeps it for that broker
    /// (a reconnection does not try 5 again), warns once, and HEALTH says so.
    func testABrokerThatSpeaks311OnlyIsUsedWith311AndSaidSoOnce() throws {
        let dir = temporaryDirectory("mqtt311-fallback")
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = freePort()
        let levels = dir.appendingPathComponent("levels.txt")
        // The CONNECT's protocol level (5: MQTT 5, 4: 3.1.1) of each of three connections; a 3.1.1 broker's answers.
        let script = """
            import socket, sys, time
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(5); s.settimeout(30)
            out = open(sys.argv[2], "a")
            open(sys.argv[2] + ".ready", "w").close()
            def packet(c):
                head = c.recv(1)
                n, shift = 0, 0
                while True:
                    b = c.recv(1)[0]; n |= (b & 127) << shift; shift += 7
                    if b < 128: break
                body = b""
                while len(body) < n: body += c.recv(n - len(body))
                return head, body
            for i in range(3):
                c, _ = s.accept(); c.settimeout(5)
                head, body = packet(c)
                level = body[6]
                out.write("%d\\n" % level); out.flush()
                if level != 4:
                    c.sendall(b"\\x20\\x02\\x00\\x01"); time.sleep(0.2); c.close(); continue
                c.sendall(b"\\x20\\x02\\x00\\x00")
                c.settimeout(1 if i < 2 else 20)
                try:
                    while c.recv(65536): pass
                except socket.timeout: pass
                c.close()
            """
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = ["-c", script, String(port), levels.path]
        try server.run()
        defer { if server.isRunning { kill(server.processIdentifier, SIGTERM) }; server.waitUntilExit() }
        XCTAssertTrue(waitFor(10) { FileManager.default.fileExists(atPath: levels.path + ".ready") }, "the fake broker listens")
        func seen() -> [String] { ((try? String(contentsOf: levels, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }

        let log = LogCapture()
        let door = try makeDoor(dir, device: "fb1", port: port, log: log)
        let stop = run(door)
        XCTAssertTrue(waitFor(20) { seen().count >= 3 }, "three connections: \(seen()); \(log.lines.joined(separator: "\n"))")
        XCTAssertEqual(seen(), ["5", "4", "4"], "MQTT 5 first, then 3.1.1 for that broker, also after a reconnection")
        XCTAssertTrue(waitFor(5) { self.health(door, "connected") == .bool(true) }, "\(door.health)")
        XCTAssertEqual(health(door, "protocol"), .string("3.1.1"), "\(door.health)")
        let warnings = log.lines.filter { $0.contains("speaks MQTT 3.1.1 only") }
        XCTAssertEqual(warnings.count, 1, log.lines.joined(separator: "\n"))
        XCTAssertTrue(warnings.first?.contains("received whole before Bearing refuses it") ?? false, warnings.first ?? "")
        XCTAssertTrue(stop(), "the door stops")
    }
}
