import BearingPOSIX
import DaemonTestRig
import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The rig's own promises, which every gpsfake test rests on: a port no other socket on the machine can take
/// before its server binds it, and a gpsfake that either serves on 127.0.0.1 or says why not.
final class TestRigTests: XCTestCase {
    func testFreePortsLieBelowTheEphemeralRangeAndAreReservedAgainstOtherProcesses() throws {
        let range = try String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
            .split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        let ports = (0..<50).map { _ in freePort() }
        XCTAssertEqual(Set(ports).count, ports.count, "a port handed out twice: \(ports)")
        let inRange = ports.filter { $0 >= range[0] }
        XCTAssertEqual(inRange, [], "in the kernel's ephemeral range \(range), which connect() and bind(0) take from")
        // Another open file description (as another process's would be) cannot take the reservation.
        let fd = open("/tmp/bearing-test-ports/\(ports[0])", O_RDWR | O_CLOEXEC)
        defer { if fd >= 0 { close(fd) } }
        XCTAssertGreaterThanOrEqual(fd, 0, "no reservation file for port \(ports[0])")
        XCTAssertNotEqual(flock(fd, LOCK_EX | LOCK_NB), 0, "port \(ports[0])'s reservation could be taken by another process")
    }

    /// 127.0.0.1:port held by another socket: gpsd then serves on [::1] alone and a client of 127.0.0.1 would be
    /// refused until it gave up. The rig must say so when gpsfake starts, naming the port.
    func testGPSFakeSaysWhenItsGpsdCannotListenOnLoopback() throws {
        try requireGpsfake()
        let port = freePort()
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        let bound = withLoopbackAddress(port: port) { bind(holder, $0, $1) }
        XCTAssertEqual(bound, 0, "could not hold 127.0.0.1:\(port) for the test")
        let log = repoRoot.appendingPathComponent("Tests/Fixtures/gpsd-relay/attitude.log")
        XCTAssertThrowsError(try GPSFake(log: log, port: port, pace: 0.05)) { error in
            XCTAssertTrue("\(error)".contains("127.0.0.1:\(port) was taken"), "the error does not say the port was taken: \(error)")
            // A port taken is no race of gpsfake's own: starting it again would meet the same, so the rig stops at the
            // launch that meets it. That is the first, unless gpsfake failed by itself before it (its own "socket error
            // [Errno 111] Connection refused", its gpsd never listening: CI on 2026-12-06, a loaded machine, 2 launches).
            XCTAssertLessThanOrEqual((error as? GPSFakeError)?.launches ?? .max, 2, "\(error)")
        }
    }

    /// gpsfake's `add_device` skips its gpsd's control socket without a word when connecting to it is refused
    /// (bound, not yet listening): gpsd then serves with no device, gpsfake runs on feeding nobody, and a test
    /// waits 60 s for data (CI on 2026-12-02, `ConformanceTests`, 0 of 17 TPVs). The rig must see a gpsd without
    /// its device and start gpsfake again. Here the device is taken from the first launch's gpsd through the same
    /// control socket.
    func testGPSFakeStartsAgainWhenItsGpsdWasNotGivenTheDevice() throws {
        try requireGpsfake()
        let port = freePort()
        let log = repoRoot.appendingPathComponent("Tests/Fixtures/gpsd-relay/attitude.log")
        var removed: [String] = []
        let fake = try GPSFake(log: log, port: port, pace: 0.05) { fake, launch in
            guard launch == 1 else { return }
            var paths: [String] = []
            let deadline = Syscall.monotonicSeconds() + 5
            while paths.isEmpty && Syscall.monotonicSeconds() < deadline {
                paths = GPSFake.devices(port: port) ?? []
                if paths.isEmpty { usleep(50_000) }
            }
            if Self.removeDevices(of: fake, port: port) > 0 { removed = paths }
        }
        defer { fake.stop() }
        XCTAssertFalse((GPSFake.devices(port: port) ?? []).isEmpty, "gpsd serves with no device")
        guard !removed.isEmpty else {
            // The first launch failed by itself before its device could be taken (gpsfake's own "socket error [Errno
            // 111] Connection refused", its gpsd never listening: CI on 2026-12-05, a loaded machine), and the rig
            // started it again for that: the case this test makes did not arise, the rig's answer to it did.
            print("TestRigTests: the first launch of gpsfake failed by itself; \(fake.launches) launches")
            XCTAssertGreaterThanOrEqual(fake.launches, 2, "gpsfake was not started again though its first launch failed")
            return
        }
        // Started again for the gpsd with no device; once more if that launch failed by itself (as in the session test).
        XCTAssertGreaterThanOrEqual(fake.launches, 2, "gpsfake was not started again though its gpsd had no device")
    }

    /// An agent started before gpsfake (as `ConformanceTests` starts one, to see the log from its first sentence) may
    /// connect to the first launch's gpsd, which had no device: that session carries nothing, and the collector must
    /// pass it over for the next launch's (CI on 150e00c: ConformanceTests read the empty one, 0 of 21 TPVs).
    func testASessionWithAGpsdThatHadNoDeviceIsPassedOver() throws {
        try requireGpsfake()
        let dir = temporaryDirectory("rig-session")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (_, log) = try writeTrack(in: dir) { $0.epochs = 10 }
        let port = freePort()
        let (agent, client) = try startWatchedAgent(makeAgentConfig(gpsdPort: port, dir: dir))
        defer { agent.stop() }
        var removed = false
        // Slowly (0.2 s a sentence), so that the first launch's device goes before it gives a TPV; the agent connects
        // to that gpsd in the 5 s the rig waits for a device.
        let fake = try GPSFake(log: log, port: port, pace: 0.2) { fake, launch in
            guard launch == 1 else { return }
            let deadline = Syscall.monotonicSeconds() + 10
            while (GPSFake.devices(port: port) ?? []).isEmpty && Syscall.monotonicSeconds() < deadline { usleep(20_000) }
            removed = Self.removeDevices(of: fake, port: port) > 0
        }
        defer { fake.stop() }
        XCTAssertTrue(removed, "the first launch's device could not be taken away")
        // Started again for the gpsd with no device; and once more if that launch failed by itself (gpsfake's own
        // "socket error [Errno 111] Connection refused", its gpsd never listening: CI on 2026-12-06, a loaded machine,
        // 3 launches). Either way the session read must be one with a device.
        XCTAssertGreaterThanOrEqual(fake.launches, 2)
        let (objects, connected) = client.collectSession(timeout: 60)
        XCTAssertTrue(connected)
        XCTAssertGreaterThan(objects.filter { cls($0) == "TPV" }.count, 0, "the session read is the one with no device")
    }

    /// Takes gpsd's devices away through gpsfake's control socket; returns how many.
    static func removeDevices(of fake: GPSFake, port: Int) -> Int {
        var count = 0
        for path in GPSFake.devices(port: port) ?? [] {
            guard let fd = try? UnixSocket.connect(path: fake.controlSocket.path) else { continue }
            let command = Array("-\(path)\r\n".utf8)
            _ = command.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            var reply = [UInt8](repeating: 0, count: 16)
            _ = read(fd, &reply, reply.count)
            close(fd)
            count += 1
        }
        return count
    }
}
