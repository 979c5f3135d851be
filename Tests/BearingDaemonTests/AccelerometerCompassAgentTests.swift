import BearingCompass
import BearingModel
import BearingAttitude
import BearingPublishing
import BearingPOSIX
import BearingSensors
import BearingDaemon
import DaemonTestRig
import Foundation
import TestSupport
import XCTest

/// An accelerometer without a gyroscope in the running agent: an LSM303AGR (its accelerometer at 0x19,
/// its LIS2MDL-compatible magnetometer at 0x1E) on a board heeled 20°. The fusion runs as a tilt-compensated
/// compass; ATT carries roll, pitch and acc_* but no gyro_*.
final class AccelerometerCompassAgentTests: XCTestCase {
    func testLSM303HeeledBoardPublishesATiltCompensatedHeadingWithoutGyroFields() throws {
        let dir = temporaryDirectory("lsm303")
        defer { try? FileManager.default.removeItem(at: dir) }
        let field = DaemonRig.fallbackField()  // Sydney: dip ≈ −64°

        // The AGR's magnetometer replaced by one that senses the board's field; the IMU found by probing.
        let bus = stillBoardBus(heading: 250, roll: -20, pitch: 4, field: field, imu: "lsm303agr", magnetometer: "lis2mdl")
        let c = makeFusedAgentConfig(dir: dir, magnetometer: "lis2mdl", imu: nil, imuRate: 50, fallback: DaemonRig.fallback)
        let agent = ServedAgent(config: c, logger: testLogger(), openBus: { _ in bus })
        try agent.start()
        defer { agent.stop() }
        let client = try SocketClient(path: agent.socketPath)
        client.watch()

        // τ 1 s without a gyroscope: settled well within 4 s.
        let late = client.attitudes(after: 4, until: 6)
        let att = try XCTUnwrap(late.last, "no ATT from the accelerometer compass: \(agent.statusLine)")
        XCTAssertEqual(att["mheading"] as? Double ?? .nan, 250, accuracy: 1)
        XCTAssertEqual(att["roll"] as? Double ?? .nan, -20, accuracy: 0.5)
        XCTAssertEqual(att["pitch"] as? Double ?? .nan, 4, accuracy: 0.5)
        XCTAssertEqual(att["acc_len"] as? Double ?? .nan, 9.81, accuracy: 0.05)
        for key in ["gyro_x", "gyro_y", "gyro_z", "temp"] { XCTAssertNil(att[key], "\(key): the LSM303 accelerometer has no gyroscope or temperature") }
        XCTAssertTrue(agent.statusLine.contains("imu connected"), agent.statusLine)
    }
}
