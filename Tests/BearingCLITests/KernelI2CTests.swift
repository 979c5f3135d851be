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
        XCTAssertEqual(rounds.count, 4, "three rounds expected")
        guard rounds.count == 4 else { return }
        let round1 = rounds[1], round2 = rounds[2], round3 = rounds[3]

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
