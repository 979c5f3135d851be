import BearingPOSIX
import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The notification protocol against real datagram sockets, as systemd would receive it.
final class ServiceNotifierTests: XCTestCase {
    func testMessagesReachAPathSocketAsSystemdReadsThem() throws {
        let dir = temporaryDirectory("notify")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("notify").path
        let receiver = try DatagramReceiver(path)
        let n = try XCTUnwrap(try ServiceNotifier.fromEnvironment { ["NOTIFY_SOCKET": path][$0] })
        XCTAssertNil(n.watchdogInterval)
        try n.ready(status: "gpsd connected,\nmagnetometer connected")
        XCTAssertEqual(receiver.next(), "READY=1\nSTATUS=gpsd connected, magnetometer connected", "one line per assignment")
        try n.reloading(status: "reloading")
        let reload = try XCTUnwrap(receiver.next())
        XCTAssertTrue(reload.hasPrefix("RELOADING=1\nMONOTONIC_USEC="), reload)
        XCTAssertTrue(reload.hasSuffix("\nSTATUS=reloading"), reload)
        try n.stopping(status: "stopping")
        try n.stopping(status: "stopping again")
        XCTAssertEqual(receiver.next(), "STOPPING=1\nSTATUS=stopping")
        try n.watchdog()
        XCTAssertEqual(receiver.next(), "WATCHDOG=1", "STOPPING is sent once; the second call sent nothing")
    }

    func testAnAbstractSocketName() throws {
        let name = "@bearing-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let receiver = try DatagramReceiver(name)
        let n = try ServiceNotifier(socketName: name)
        try n.status("up")
        XCTAssertEqual(receiver.next(), "STATUS=up")
    }

    func testTheEnvironmentIsReadAsSystemdSetsIt() throws {
        XCTAssertNil(try ServiceNotifier.fromEnvironment { _ in nil }, "no NOTIFY_SOCKET: not under systemd, no notifier")
        let mine = try XCTUnwrap(try ServiceNotifier.fromEnvironment {
            ["NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "2500000", "WATCHDOG_PID": "\(getpid())"][$0]
        })
        XCTAssertEqual(mine.watchdogInterval, 2.5)
        let other = try XCTUnwrap(try ServiceNotifier.fromEnvironment {
            ["NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "2500000", "WATCHDOG_PID": "1"][$0]
        })
        XCTAssertNil(other.watchdogInterval, "a watchdog meant for another process is not ours")
        XCTAssertThrowsError(try ServiceNotifier.fromEnvironment { ["NOTIFY_SOCKET": "vsock:2:1234"][$0] }) {
            XCTAssertTrue("\($0)".contains("NOTIFY_SOCKET(vsock:2:1234)"), "\($0)")
        }
        let dir = temporaryDirectory("notify")
        defer { try? FileManager.default.removeItem(at: dir) }
        let gone = try ServiceNotifier(socketName: dir.appendingPathComponent("nobody-listens").path)
        XCTAssertThrowsError(try gone.status("x")) { XCTAssertTrue("\($0)".contains("sendto"), "\($0)") }
    }
}
