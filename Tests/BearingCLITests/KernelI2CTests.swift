import Foundation
import TestSupport
import XCTest

/// Bearing's own binary against the real kernel I2C stack (i2c-dev + i2c-stub) in a qemu VM:
/// `bearing probe --read` must identify each chip from its ID registers and scale its raw data to the
/// µT values the guest script put there (scripts/vm-i2c/guest.sh), and name missing buses.
final class KernelI2CTests: XCTestCase {
    var binary: URL { bearingBinary }

    func testProbeAndDriverReadsAgainstI2CStubInAVM() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/qemu-system-x86_64") else {
            throw XCTSkip("SKIPPED: qemu-system-x86_64 is not installed (apt-get install qemu-system-x86); .ci/run installs it")
        }
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw XCTSkip("SKIPPED: \(binary.path) not built")
        }
        let p = Process()
        p.executableURL = repoRoot.appendingPathComponent("scripts/vm-i2c/run")
        p.arguments = [binary.path, repoRoot.appendingPathComponent("scripts/vm-i2c/guest.sh").path]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        // The serial console ends lines with CR LF.
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .replacingOccurrences(of: "\r", with: "")
        p.waitUntilExit()
        print(text)
        XCTAssertTrue(text.contains("VM-BOOTED"), "the VM did not boot")
        XCTAssertFalse(text.contains("VM-FAIL"), "guest setup failed")
        XCTAssertTrue(text.contains("VM-GUEST-EXIT 0"), "the guest script did not finish")

        let rounds = text.components(separatedBy: "VM-ROUND-")
        XCTAssertEqual(rounds.count, 5, "four rounds expected")
        guard rounds.count == 5 else { return }
        let round1 = rounds[1], round2 = rounds[2], round3 = rounds[3], round4 = rounds[4]

        // Identification table.
        for (address, chip) in [("0x0c", "AKM AK09916"), ("0x0d", "QST QMC5883L"), ("0x10", "Bosch BMM150"),
                                ("0x1c", "ST LIS3MDL"), ("0x1e", "Honeywell HMC5883L"), ("0x30", "MEMSIC MMC5983MA")] {
            XCTAssertNotNil(round1.range(of: "\(address)     \(chip)"), "\(chip) at \(address) not identified")
        }
        XCTAssertTrue(round1.contains("VM-PROBE-EXIT 0"))
        XCTAssertNotNil(round2.range(of: "0x1e     ST LIS2MDL / LSM303AGR"))

        // Driver reads: (chip, expected x, y, z in µT) from the raw values in guest.sh.
        let expected: [(String, String, Double, Double, Double)] = [
            (round1, "hmc5883l 0x1e", 50, 20, -100),           // 545, 218, −1090 counts at 1090/G
            (round1, "qmc5883l 0x0d", 20, -10, 50),            // 2400, −1200, 6000 at 12000/G
            (round1, "lis3mdl 0x1c", 1368 / 68.42, -684 / 68.42, 3421 / 68.42),
            (round1, "bmm150 0x10", 31.25, -20, 100),          // trim chosen so X/Y = raw·0.3125, Z = raw/3
            (round1, "ak09916 0x0c", 30, -60, 150),            // 200, −400, 1000 at 0.15 µT
            (round1, "mmc5983ma 0x30", 0, 0, 0),               // same data after SET and RESET: all offset
            (round2, "lis2mdl 0x1e", -30, 15, 45),
        ]
        for (round, key, x, y, z) in expected {
            guard let v = Self.reading(round, key) else { XCTFail("no reading for \(key)"); continue }
            XCTAssertEqual(v[0], x, accuracy: 0.002, key)
            XCTAssertEqual(v[1], y, accuracy: 0.002, key)
            XCTAssertEqual(v[2], z, accuracy: 0.002, key)
        }
        // MMC5983MA: the bridge offset carries the stub's values (1638, −3277, 8192 counts at 16384/G).
        XCTAssertNotNil(round1.range(of: "bridge offset x 9.998 y -20.001 z 50.000 µT"), "MMC5983MA offset")

        // Errors from the real stack.
        XCTAssertTrue(round3.contains("/dev/i2c-7 does not exist: enable I2C"), round3)
        XCTAssertTrue(round3.contains("0x50     (unknown device)"), round3)
        XCTAssertTrue(round3.contains("no supported magnetometer found"), round3)
        XCTAssertTrue(round3.contains("VM-PROBE-EXIT 2"), round3)

        // Accelerometer/gyroscope chips: identified, configured and read in one burst each.
        XCTAssertNotNil(round4.range(of: "0x6a     ST LSM6DSOX"), round4)
        XCTAssertNotNil(round4.range(of: "0x68     InvenSense MPU-6050"), round4)
        let g = 9.80665, radiansPerDegree = Double.pi / 180
        let inertial: [(String, [Double], [Double])] = [
            ("lsm6dsx 0x6a", [1000, -2000, 8000].map { $0 * 0.122e-3 * g }, [100, -200, 400].map { $0 * 17.5e-3 * radiansPerDegree }),
            ("mpu6xxx 0x68", [4096, -2048, 8192].map { $0 / 8192 * g }, [655, -131, 0].map { $0 / 65.5 * radiansPerDegree }),
        ]
        for (key, accel, gyro) in inertial {
            guard let v = Self.inertialReading(round4, key) else { XCTFail("no reading for \(key)"); continue }
            for i in 0..<3 {
                XCTAssertEqual(v.accel[i], accel[i], accuracy: 0.002, "\(key) accel \(i)")
                XCTAssertEqual(v.gyro[i], gyro[i], accuracy: 0.0002, "\(key) gyro \(i)")
            }
        }
        XCTAssertTrue(round4.contains("temperature 36.5 °C"), "MPU-6050 temperature: raw 0 is 36.53 °C")
        XCTAssertTrue(round4.contains("VM-PROBE-EXIT 0"), round4)
    }

    /// The accelerometer and gyroscope vectors of a `read CHIP ADDRESS: accel x … gyro x … rad/s` line.
    static func inertialReading(_ text: String, _ key: String) -> (accel: [Double], gyro: [Double])? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("read \(key): accel x ") }) else { return nil }
        let f = line.split(separator: " ")
        func vector(after word: String) -> [Double]? {
            guard let i = f.firstIndex(of: Substring(word)), f.count > i + 6, f[i + 1] == "x" else { return nil }
            let values = [f[i + 2], f[i + 4], f[i + 6]].compactMap { Double($0) }
            return values.count == 3 ? values : nil
        }
        guard let accel = vector(after: "accel"), let gyro = vector(after: "gyro") else { return nil }
        return (accel, gyro)
    }

    /// The x, y, z of a `read CHIP ADDRESS: x … y … z … µT` line.
    static func reading(_ text: String, _ key: String) -> [Double]? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("read \(key): x ") }) else { return nil }
        let f = line.split(separator: " ")
        guard let xi = f.firstIndex(of: "x"), f.count > xi + 5 else { return nil }
        let values = [f[xi + 1], f[xi + 3], f[xi + 5]].compactMap { Double($0) }
        return values.count == 3 ? values : nil
    }
}
