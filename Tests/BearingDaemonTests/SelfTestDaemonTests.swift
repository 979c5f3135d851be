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
        // On a machine so busy that the daemon's readers ran late (HEALTH's `missed`), or this test lost lines from
        // the socket (OVERFLOW), the rate and noise are not the chip's: they are said to be not judged, never failed.
        let late = ["magnetometer", "imu"].filter { line($0, "rate")?.verdict == .warn }
        for sensor in ["magnetometer", "imu"] {
            let rate = line(sensor, "rate")
            if late.contains(sensor) {
                print("\(sensor): samples went missing on the way: \(rate?.fix ?? "")")
                XCTAssertTrue(rate?.fix?.hasPrefix("not judged: ") == true, "\(String(describing: rate))")
            } else {
                XCTAssertEqual(rate?.verdict, .pass, "\(String(describing: rate))")
            }
        }
        XCTAssertEqual(line("imu", "still")?.verdict, .warn)
        XCTAssertEqual(report.failed.map { "\($0.sensor) \($0.check): \($0.measured)" }, [])
        // HEALTH says how many reads each sensor's reader missed by running late.
        client.send("?HEALTH;\n")
        let health = try XCTUnwrap(client.collect(timeout: 10) { cls($0) == "HEALTH" }.last)
        let sources = try XCTUnwrap(health["sources"] as? [[String: Any]])
        for name in ["magnetometer", "imu"] {
            XCTAssertNotNil(sources.first { $0["source"] as? String == name }?["missed"] as? Double, "\(name) in \(sources)")
        }
    }
}
