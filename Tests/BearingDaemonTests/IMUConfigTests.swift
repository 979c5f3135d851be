import BearingModel
import BearingCalibration
@testable import BearingConfig
@testable import BearingMarine
@testable import BearingMQTT
@testable import BearingDaemon
import Foundation
import XCTest

/// The `imu:` config section and the boards that name an IMU.
final class IMUConfigTests: XCTestCase {
    let boards = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("boards")

    func testIMUSectionIsRead() throws {
        let c = try AgentConfig.parse(yaml: """
            magnetometer:
              chip: lis3mdl
            imu:
              bus: 3
              chip: LSM6DSX
              address: 0x6b
              rate: 104
              orientation: "+X-Y-Z"
              rotation: [0, 0, 90]
              retry_initial: 0.2
              retry_max: 10
            """, source: "bearing.yaml")
        XCTAssertTrue(c.imu.enabled)
        XCTAssertEqual(c.imu.reader.bus, "/dev/i2c-3")
        XCTAssertEqual(c.imu.reader.chip, "lsm6dsx")
        XCTAssertEqual(c.imu.reader.address, 0x6B)
        XCTAssertEqual(c.imu.reader.settings.rate, 104)
        XCTAssertEqual(c.imu.orientation.axes, "+X-Y-Z")
        XCTAssertEqual(c.imu.orientation.rotation, Vector3(0, 0, 90))
        XCTAssertEqual(c.imu.reader.retryInitial, 0.2)
        XCTAssertEqual(c.imu.reader.retryMax, 10)
        XCTAssertFalse(AgentConfig().imu.enabled, "no imu section, no IMU")
        let auto = try AgentConfig.parse(yaml: "magnetometer: {}\nimu:\n  chip: auto\n  enabled: false\n", source: "b.yaml")
        XCTAssertNil(auto.imu.reader.chip)
        XCTAssertFalse(auto.imu.enabled)
    }

    /// The accelerometer calibration and mounting level files: beside the magnetometer's calibration file
    /// unless named.
    func testCalibrationAndLevelFilesSitBesideTheMagnetometersUnlessNamed() throws {
        let beside = try AgentConfig.parse(yaml: "magnetometer:\n  calibration: /srv/b/cal.json\nimu: {}\n", source: "b.yaml")
        XCTAssertEqual(beside.accelerometerCalibrationPath, "/srv/b/accelerometer.json")
        XCTAssertEqual(beside.levelPath, "/srv/b/level.json")
        XCTAssertEqual(AgentConfig().levelPath, (AgentConfig.defaultCalibrationPath() as NSString).deletingLastPathComponent + "/level.json")
        let named = try AgentConfig.parse(yaml: "magnetometer: {}\nimu:\n  calibration: /etc/a.json\n  level: /etc/l.json\n", source: "b.yaml")
        XCTAssertEqual(named.accelerometerCalibrationPath, "/etc/a.json")
        XCTAssertEqual(named.levelPath, "/etc/l.json")
        XCTAssertThrowsError(try AgentConfig.parse(yaml: "magnetometer: {}\nimu:\n  level: level.json\n", source: "b.yaml")) {
            XCTAssertTrue("\($0)".contains("b.yaml:3: imu.level: \"level.json\" is not allowed; an absolute path"), "\($0)")
        }
    }

    func testBadIMUValuesNameFileLineKeyAndWhatIsAllowed() {
        func rejected(_ yaml: String, _ words: [String], line: UInt = #line) {
            XCTAssertThrowsError(try AgentConfig.parse(yaml: yaml, source: "bearing.yaml"), line: line) { e in
                for w in words { XCTAssertTrue("\(e)".contains(w), "\(e) lacks \(w)", line: line) }
            }
        }
        let mag = "magnetometer:\n  chip: qmc5883l\n"
        rejected(mag + "imu:\n  chip: bno055\n", ["bearing.yaml:4", "imu.chip", "\"bno055\"", "lsm6dsx", "icm20948"])
        rejected(mag + "imu:\n  address: 0x80\n", ["bearing.yaml:4", "imu.address", "0x03 to 0x77"])
        rejected(mag + "imu:\n  rate: 5000\n", ["bearing.yaml:4", "imu.rate", "samples per second", "1000"])
        rejected(mag + "imu:\n  orientation: \"+X+Y-Z\"\n", ["bearing.yaml:4", "imu.orientation", "mirror"])
        rejected(mag + "imu:\n  rotation: [1, 2]\n", ["bearing.yaml:4", "imu.rotation", "3 numbers"])
        rejected(mag + "imu:\n  bus: i2c-x\n", ["bearing.yaml:4", "imu.bus"])
        rejected(mag + "imu:\n  rate_hz: 100\n", ["bearing.yaml:4", "unknown key \"imu.rate_hz\"", "orientation"])
        rejected(mag + "imu:\n  retry_initial: 5\n  retry_max: 1\n", ["imu.retry_max", "imu.retry_initial"])
        rejected("imu:\n  chip: lsm6dsx\n", ["bearing.yaml:2", "imu", "magnetometer"])
        rejected("magnetometer:\n  enabled: false\nimu:\n  chip: lsm6dsx\n", ["bearing.yaml:4", "needs a magnetometer"])
    }

    func testIMUBoardProfilesParseWithBothSensors() throws {
        let expected: [(board: String, mag: String, magAddress: UInt8, imu: String, imuAddress: UInt8)] = [
            ("sense-hat", "lis3mdl", 0x1C, "lsm9ds1", 0x6A),
            ("berryimu-v3", "lis3mdl", 0x1C, "lsm6dsx", 0x6A),
            ("icm20948-breakout", "ak09916", 0x0C, "icm20948", 0x69),
            ("lsm303-breakout", "lis2mdl", 0x1E, "lsm303", 0x19),
            ("simulator", "qmc5883l", 0x0D, "lsm6dsx", 0x6A),
        ]
        for e in expected {
            let p = try BoardProfile.load(boards.appendingPathComponent("\(e.board).yaml").path)
            let c = try p.baseConfig(module: nil)
            XCTAssertTrue(c.magnetometer.enabled, e.board)
            XCTAssertEqual(c.magnetometer.reader.chip, e.mag, e.board)
            XCTAssertEqual(c.magnetometer.reader.address, e.magAddress, e.board)
            XCTAssertTrue(c.imu.enabled, e.board)
            XCTAssertEqual(c.imu.reader.chip, e.imu, e.board)
            XCTAssertEqual(c.imu.reader.address, e.imuAddress, e.board)
            XCTAssertEqual(c.imu.reader.bus, c.magnetometer.reader.bus, e.board)
        }
        let icm = try BoardProfile.load(boards.appendingPathComponent("icm20948-breakout.yaml").path).baseConfig(module: "icm20948-0x68")
        XCTAssertEqual(icm.imu.reader.address, 0x68)
        let dlhc = try BoardProfile.load(boards.appendingPathComponent("lsm303-breakout.yaml").path).baseConfig(module: "lsm303dlhc")
        XCTAssertEqual(dlhc.magnetometer.reader.chip, "hmc5883l")
        XCTAssertEqual(dlhc.imu.reader.chip, "lsm303")
        // The rpi-* modules have no IMU: their configs stay magnetometer-only.
        XCTAssertFalse(try BoardProfile.load(boards.appendingPathComponent("rpi-4b.yaml").path).baseConfig(module: nil).imu.enabled)
    }

    func testBadBoardIMUIsNamed() {
        let yaml = """
            name: b
            i2c_bus: /dev/i2c-1
            modules:
              - name: m
                chip: lis3mdl
                address: 0x1c
                imu:
                  chip: lsm6dsx
            """
        XCTAssertThrowsError(try BoardProfile.parse(yaml: yaml, source: "b.yaml")) { e in
            XCTAssertTrue("\(e)".contains("b.yaml:8") && "\(e)".contains("modules[0].imu") && "\(e)".contains("chip and address"), "\(e)")
        }
        XCTAssertThrowsError(try BoardProfile.parse(yaml: yaml.replacingOccurrences(of: "lsm6dsx", with: "lsm6"), source: "b.yaml")) { e in
            XCTAssertTrue("\(e)".contains("modules[0].imu.chip") && "\(e)".contains("lsm9ds1"), "\(e)")
        }
    }
}
