import BearingDaemon
import Foundation
import DaemonTestRig
import TestSupport
import XCTest

/// `?DEVICES;` names each source once: gpsd, and each sensor by the address it was found at, also when the
/// config leaves the chip and the address to be found (`auto`).
final class DevicesTests: XCTestCase {
    func testWithChipsAndAddressesOnAutoEachSensorIsListedOnceAtTheAddressFound() throws {
        let rig = try DaemonRig("devices-auto", gps: false, configure: { c in
            c.magnetometer.reader.chip = nil
            c.magnetometer.reader.address = nil
            c.imu.reader.chip = nil
            c.imu.reader.address = nil
        })
        defer { rig.finish() }
        let client = try SocketClient(path: rig.socketPath)
        client.watch()
        // Both found: an ATT with a heading needs the IMU and the magnetometer.
        let objects = client.collect(timeout: 20) { cls($0) == "ATT" && $0["heading"] is Double }
        XCTAssertNotNil(objects.last { cls($0) == "ATT" && $0["heading"] is Double }, "no fused ATT in 20 s")
        client.send("?DEVICES;\n")
        let reply = client.collect(timeout: 5) { cls($0) == "DEVICES" }
        let devices = try XCTUnwrap(reply.last { cls($0) == "DEVICES" }?["devices"] as? [[String: Any]], "no DEVICES reply")
        let paths = devices.compactMap { $0["path"] as? String }
        XCTAssertEqual(paths.filter { $0.hasPrefix("i2c:") }, [DaemonRig.magnetometerDevice, DaemonRig.imuDevice], "\(paths)")
        XCTAssertEqual(paths.first, "gpsd://127.0.0.1:\(DaemonRig.noGPSD)", "\(paths)")
        XCTAssertEqual(Set(paths).count, paths.count, "each device once: \(paths)")
    }
}
