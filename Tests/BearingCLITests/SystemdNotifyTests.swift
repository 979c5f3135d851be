import BearingCore
import Foundation
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
                                              environment: ["NOTIFY_SOCKET": notify])
        defer { if agent.isRunning { kill(agent.processIdentifier, SIGKILL) } }

        let ready = try XCTUnwrap(receiver.next(timeout: 20000), "READY=1 within 20 s")
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
