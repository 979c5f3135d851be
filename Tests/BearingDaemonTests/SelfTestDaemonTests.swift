import BearingCalibrationWorkflow
import BearingDaemon
import BearingModel
import BearingSelfTest
import DaemonTestRig
import Foundation
import TestSupport
import XCTest

/// `bearing selftest` with the daemon running asks the daemon (HEALTH, MAG, ATT) instead of opening the chips again.
final class SelfTestDaemonTests: XCTestCase {
    func testWithTheDaemonRunningTheTestReadsTheDaemonsSamples() throws {
        let rig = try DaemonRig("selftest-daemon", gps: false)
        defer { rig.finish() }
        // The sensors found and reading.
        let client = try SocketClient(path: rig.socketPath)
        client.watch()
        XCTAssertFalse(client.collect(timeout: 20) { cls($0) == "ATT" && $0["heading"] is Double }.isEmpty)
        var session = SelfTestSession(magnetometer: rig.config.magnetometer, imu: rig.config.imu, socketPath: rig.socketPath)
        try session.set(bus: nil, direct: false, seconds: 3, moves: false, board: nil, position: "51,0", fallback: nil, precisePosition: false)
        let report = try session.run(say: { _ in }, progress: { _ in })
        print(report.table)
        XCTAssertTrue(report.facts.contains { $0.0 == "read" && $0.1.hasPrefix("from the running daemon") }, "\(report.facts)")
        func line(_ sensor: String, _ check: String) -> SelfTestLine? { report.lines.first { $0.sensor == sensor && $0.check == check } }
        XCTAssertEqual(line("magnetometer", "i2c errors")?.verdict, .pass)
        XCTAssertEqual(line("imu", "i2c errors")?.verdict, .pass)
        XCTAssertEqual(line("magnetometer", "registers")?.verdict, .info, "the daemon owns the chip: not read back")
        // The simulator board turns and rolls: the rates are judged, and the board is seen to move, not called noisy.
        XCTAssertEqual(line("magnetometer", "rate")?.verdict, .pass, "\(String(describing: line("magnetometer", "rate")))")
        XCTAssertEqual(line("imu", "rate")?.verdict, .pass, "\(String(describing: line("imu", "rate")))")
        XCTAssertEqual(line("imu", "still")?.verdict, .warn)
        XCTAssertEqual(report.failed.map { "\($0.sensor) \($0.check): \($0.measured)" }, [])
    }
}
