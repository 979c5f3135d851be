import BearingModel
import BearingDaemon
import Foundation
import DaemonTestRig
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `bearing run` as systemd's Type=notify sees it: READY=1 only once the socket listens, STATUS lines,
/// RELOADING=1 then READY=1 around SIGHUP, STOPPING=1 on SIGTERM.
final class SystemdNotifyTests: XCTestCase {
    func testReadyOnlyWhenListeningThenReloadAndStop() throws {
        let dir = temporaryDirectory("notify")
        defer { try? FileManager.default.removeItem(at: dir) }
        let notify = dir.appendingPathComponent("notify").path
        let receiver = try DatagramReceiver(notify)
        let socket = dir.appendingPathComponent("bearing.sock").path
        // No gpsd at this port: the agent is ready all the same, and says gpsd is not connected.
        let (agent, _, _) = try launchBearing(["run", "--gpsd", "127.0.0.1:\(freePort())", "--socket", socket, "--log-level", "error"],
                                              environment: ["NOTIFY_SOCKET": notify, "STATE_DIRECTORY": dir.path])
        defer { if agent.isRunning { kill(agent.processIdentifier, SIGKILL) } }

        let ready = try XCTUnwrap(receiver.next(timeout: 20), "READY=1 within 20 s")
        XCTAssertTrue(ready.hasPrefix("READY=1\nSTATUS=gpsd "), ready)
        XCTAssertTrue(ready.hasSuffix(", 0 readers"), ready)
        XCTAssertNoThrow(try SocketClient(path: socket), "by READY=1 the socket accepts")

        kill(agent.processIdentifier, SIGHUP)
        let reloading = try XCTUnwrap(receiver.next())
        XCTAssertTrue(reloading.hasPrefix("RELOADING=1\nMONOTONIC_USEC="), reloading)
        XCTAssertTrue(try XCTUnwrap(receiver.next()).hasPrefix("READY=1\nSTATUS="), "READY=1 again when the reload is done")

        kill(agent.processIdentifier, SIGTERM)
        var stopping: String?
        while let m = receiver.next() {   // a STATUS update may come first
            if m.hasPrefix("STOPPING=1") { stopping = m; break }
        }
        XCTAssertNotNil(stopping, "STOPPING=1 on SIGTERM")
        agent.waitUntilExit()
        XCTAssertEqual(agent.terminationStatus, 0)
    }
}

/// The watchdog: fed while every part makes progress, starved when one is wedged.
final class WatchdogTests: XCTestCase {
    func run(wedge: Bool) throws -> (pings: [Double], stderr: String) {
        let dir = temporaryDirectory("watchdog")
        defer { try? FileManager.default.removeItem(at: dir) }
        let notify = dir.appendingPathComponent("notify").path
        let receiver = try DatagramReceiver(notify)
        // Its state (the black box the watchdog's fault saves) in the test's folder, not /var/lib/bearing.
        var env = ["NOTIFY_SOCKET": notify, "WATCHDOG_USEC": "1000000", "STATE_DIRECTORY": dir.path]
        if wedge { env["BEARING_TEST_WEDGE"] = "pipeline" }
        let (agent, _, err) = try launchBearing(["run", "--gpsd", "127.0.0.1:\(freePort())", "--socket", dir.appendingPathComponent("s.sock").path,
                                                 "--log-level", "critical"], environment: env)
        defer { if agent.isRunning { kill(agent.processIdentifier, SIGKILL) } }
        let ready = try XCTUnwrap(receiver.next(timeout: 20))
        XCTAssertTrue(ready.hasPrefix("READY=1"), ready)
        let start = Date()
        var pings: [Double] = []
        while Date().timeIntervalSince(start) < 4 {
            if receiver.next(timeout: 0.2) == "WATCHDOG=1" { pings.append(Date().timeIntervalSince(start)) }
        }
        kill(agent.processIdentifier, SIGKILL)
        agent.waitUntilExit()
        return (pings, String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    func testFedEveryHalfIntervalWhileEveryPartWorks() throws {
        let (pings, _) = try run(wedge: false)
        XCTAssertGreaterThanOrEqual(pings.count, 6, "WATCHDOG=1 every 0.5 s over 4 s: \(pings)")
        XCTAssertGreaterThan(pings.last ?? 0, 3, "still fed at the end: \(pings)")
    }

    func testAWedgedPipelineQueueStarvesItAndSaysWhich() throws {
        let (pings, stderr) = try run(wedge: true)
        XCTAssertLessThanOrEqual(pings.count, 3, "at most the pings before 1 s without progress: \(pings)")
        XCTAssertLessThan(pings.last ?? 0, 2, "none in the last 2 s: \(pings)")
        XCTAssertTrue(stderr.contains("watchdog not fed") && stderr.contains("pipeline queue: no progress"), stderr)
    }
}

/// Socket activation with systemd's own tool: `systemd-socket-activate` listens, a reader connects before
/// Bearing runs, and Bearing, started on that first connection, serves it on the inherited socket.
final class SocketActivationTests: XCTestCase {
    func testAReaderWhoConnectsFirstIsServedOnTheInheritedSocket() throws {
        let tool = "/usr/bin/systemd-socket-activate"
        guard FileManager.default.isExecutableFile(atPath: tool) else { throw XCTSkip("SKIPPED: \(tool) missing (apt-get install systemd)") }
        guard FileManager.default.isExecutableFile(atPath: bearingBinary.path) else { throw XCTSkip("SKIPPED: bearing not built") }
        let dir = temporaryDirectory("activation")
        defer { try? FileManager.default.removeItem(at: dir) }
        let socket = dir.appendingPathComponent("bearing.sock").path
        let notify = dir.appendingPathComponent("notify").path
        let receiver = try DatagramReceiver(notify)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        // The config's socket.path differs on purpose: the inherited socket is what counts.
        p.arguments = ["--listen=\(socket)", "--fdname=bearing", "-E", "NOTIFY_SOCKET=\(notify)", bearingBinary.path, "run",
                       "--gpsd", "127.0.0.1:\(freePort())", "--socket", dir.appendingPathComponent("unused.sock").path, "--log-level", "error"]
        p.standardInput = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        var waited = 0
        while !FileManager.default.fileExists(atPath: socket) && waited < 100 { usleep(50_000); waited += 1 }
        XCTAssertNil(receiver.next(timeout: 0.3), "nothing runs Bearing before a reader connects")

        let reader = try SocketClient(path: socket)
        XCTAssertEqual(try XCTUnwrap(reader.message(timeout: 20)).className, "VERSION", "the first reader is served once Bearing is up")
        XCTAssertTrue(try XCTUnwrap(receiver.next(timeout: 10)).hasPrefix("READY=1"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("unused.sock").path), "no socket of its own")

        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: socket), "the socket is systemd's: Bearing does not remove it")
    }

    /// bearing.socket with the TCP door added (`ListenStream=127.0.0.1:PORT`): two listeners, in either order;
    /// a gpsd client on the TCP port starts Bearing, and both doors are served without `socket.tcp`.
    func testTheTCPDoorFromTheSocketUnitIsServedToo() throws {
        let tool = "/usr/bin/systemd-socket-activate"
        guard FileManager.default.isExecutableFile(atPath: tool) else { throw XCTSkip("SKIPPED: \(tool) missing (apt-get install systemd)") }
        guard FileManager.default.isExecutableFile(atPath: bearingBinary.path) else { throw XCTSkip("SKIPPED: bearing not built") }
        let dir = temporaryDirectory("activation-tcp")
        defer { try? FileManager.default.removeItem(at: dir) }
        let socket = dir.appendingPathComponent("bearing.sock").path
        let port = freePort()
        let notify = dir.appendingPathComponent("notify").path
        let receiver = try DatagramReceiver(notify)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = ["--listen=127.0.0.1:\(port)", "--listen=\(socket)", "--fdname=bearing-tcp:bearing", "-E", "NOTIFY_SOCKET=\(notify)",
                       bearingBinary.path, "run",
                       "--gpsd", "127.0.0.1:\(freePort())", "--socket", dir.appendingPathComponent("unused.sock").path, "--log-level", "error"]
        p.standardInput = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        var waited = 0
        while !FileManager.default.fileExists(atPath: socket) && waited < 100 { usleep(50_000); waited += 1 }

        let door = try SocketClient(tcpPort: port)
        XCTAssertEqual(try XCTUnwrap(door.message(timeout: 20)).className, "VERSION", "the TCP door's first client is served")
        let reader = try SocketClient(path: socket)
        XCTAssertEqual(try XCTUnwrap(reader.message(timeout: 10)).className, "VERSION", "and so is the UNIX socket's")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("unused.sock").path), "no socket of its own")
        // Readers are served from the moment the listeners are adopted; SIGTERM is handled from READY=1 on.
        XCTAssertTrue(try XCTUnwrap(receiver.next(timeout: 10)).hasPrefix("READY=1"))

        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
    }

    /// bearing-web.socket (`ListenStream=127.0.0.1:8074`, `FileDescriptorName=web`) beside bearing.socket: a
    /// browser's first request starts Bearing, and the web door serves it on the inherited listener.
    func testTheWebDoorFromItsSocketUnitIsServed() throws {
        let tool = "/usr/bin/systemd-socket-activate"
        guard FileManager.default.isExecutableFile(atPath: tool) else { throw XCTSkip("SKIPPED: \(tool) missing (apt-get install systemd)") }
        guard FileManager.default.isExecutableFile(atPath: bearingBinary.path) else { throw XCTSkip("SKIPPED: bearing not built") }
        let dir = temporaryDirectory("activation-web")
        defer { try? FileManager.default.removeItem(at: dir) }
        let socket = dir.appendingPathComponent("bearing.sock").path
        let port = freePort(), unusedPort = freePort()
        let notify = dir.appendingPathComponent("notify").path
        let receiver = try DatagramReceiver(notify)
        let config = dir.appendingPathComponent("bearing.yaml")
        try "web: {port: \(unusedPort), credential: \(dir.path)/web-credential}\n".write(to: config, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = ["--listen=\(socket)", "--listen=127.0.0.1:\(port)", "--fdname=bearing:web", "-E", "NOTIFY_SOCKET=\(notify)",
                       bearingBinary.path, "run", "--config", config.path,
                       "--gpsd", "127.0.0.1:\(freePort())", "--socket", dir.appendingPathComponent("unused.sock").path, "--log-level", "error"]
        p.standardInput = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        var waited = 0
        while tcpConnectError(port: port) != nil && waited < 100 { usleep(50_000); waited += 1 }

        let browser = try RawTCPReader(port: port)
        let request = Array("GET / HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(browser.fd, $0.baseAddress!, $0.count, 0) }
        XCTAssertTrue(browser.waitForClose(timeout: 20))
        let reply = String(decoding: browser.bytes, as: UTF8.self)
        XCTAssertTrue(reply.hasPrefix("HTTP/1.0 200") || reply.hasPrefix("HTTP/1.1 200"), String(reply.prefix(200)))
        XCTAssertTrue(reply.contains("<html"), "not the page")
        XCTAssertNotNil(tcpConnectError(port: unusedPort), "the web door opened a listener of its own")
        let reader = try SocketClient(path: socket)
        XCTAssertEqual(try XCTUnwrap(reader.message(timeout: 10)).className, "VERSION", "the UNIX socket is served too")
        // The doors serve from the moment they are open; SIGTERM is handled from READY=1 on.
        XCTAssertTrue(try XCTUnwrap(receiver.next(timeout: 10)).hasPrefix("READY=1"))

        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
    }
}
