import Foundation
import DaemonTestRig
import TestSupport
import XCTest

/// Bearing's own binary against the real kernel I2C stack (i2c-dev + i2c-stub) in a qemu VM:
/// `bearing probe --read` must identify each chip from its ID registers and scale its raw data to the
/// µT, m/s² and rad/s values the guest script put there (scripts/vm-i2c/guest.sh), and name missing buses.
/// Round 7: `bearing run` on a magnetometer and an IMU in i2c-stub, its black box saved with SIGUSR1; the
/// recording replayed here (`bearing replay --fast`) must give the VM's data log, byte for byte.
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
        let started = Date()
        try p.run()
        // The serial console ends lines with CR LF.
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .replacingOccurrences(of: "\r", with: "")
        p.waitUntilExit()
        let vmSeconds = Date().timeIntervalSince(started)
        print(text)
        XCTAssertTrue(text.contains("VM-BOOTED"), "the VM did not boot")
        XCTAssertFalse(text.contains("VM-FAIL"), "guest setup failed")
        XCTAssertTrue(text.contains("VM-GUEST-EXIT 0"), "the guest script did not finish")

        let rounds = text.components(separatedBy: "VM-ROUND-")
        XCTAssertEqual(rounds.count, 8, "seven rounds expected")
        guard rounds.count == 8 else { return }
        let round1 = rounds[1], round2 = rounds[2], round3 = rounds[3], round4 = rounds[4], round5 = rounds[5]
        let round6 = rounds[6], round7 = rounds[7]

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
            // The LIS2MDL's raw Z negated: its registers are a left-handed frame.
            (round2, "lis2mdl 0x1e", -30, 15, -45),
            (round5, "ak09916 0x0c", 30, -60, 150),
            (round5, "lis2mdl 0x1e", 30, -15, 45),            // the LSM303AGR's magnetometer
            // The LSM303DLHC's magnetometer through the HMC5883L driver: 1100, 550, −980 counts at 1090/G,
            // not the DLHC's 1100 (X, Y) and 980 (Z) LSB/G, which would give 100, 50, −100 µT.
            (round6, "hmc5883l 0x1e", 1100 / 10.9, 550 / 10.9, -980 / 10.9),
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
        // Round 5: the LSM9DS1 and the ICM-20948 at their second addresses, the LSM303AGR's accelerometer
        // (told from a DLHC by its magnetometer at 0x1e); round 6: the LSM303DLHC, whose magnetometer the
        // probe names as possibly the HMC5883L it answers like.
        // (round, address, chip column, confidence) of the identification table.
        let rows: [(String, String, String, String)] = [
            (round5, "0x6b", "ST LSM9DS1 (accel/gyro)", "high"), (round5, "0x69", "TDK ICM-20948 (accel/gyro)", "high"),
            (round5, "0x69", "TDK ICM-20948 (AK09916 via bypass at 0x0c)", "high"),
            (round5, "0x19", "ST LSM303AGR (accelerometer)", "medium"), (round5, "0x1e", "ST LIS2MDL / LSM303AGR", "high"),
            (round6, "0x19", "ST LSM303DLHC (accelerometer)", "medium"),
            (round6, "0x1e", "Honeywell HMC5883L (or the LSM303DLHC's magnetometer)", "high"),
        ]
        for (round, address, chip, confidence) in rows {
            let row = "\(address)     \(chip.count < 42 ? chip.padding(toLength: 42, withPad: " ", startingAt: 0) : chip) \(confidence)\n"
            XCTAssertNotNil(round.range(of: row), "\(row) not in\n\(round)")
        }
        let inertial: [(String, String, [Double], [Double]?)] = [
            (round4, "lsm6dsx 0x6a", [1000, -2000, 8000].map { $0 * 0.122e-3 * g }, [100, -200, 400].map { $0 * 17.5e-3 * radiansPerDegree }),
            (round4, "mpu6xxx 0x68", [4096, -2048, 8192].map { $0 / 8192 * g }, [655, -131, 0].map { $0 / 65.5 * radiansPerDegree }),
            // The LSM9DS1's raw X reversed: its accelerometer/gyroscope axes are left-handed.
            (round5, "lsm9ds1 0x6b", [-2000, -4000, 8000].map { $0 * 0.122e-3 * g }, [-200, -400, 800].map { $0 * 17.5e-3 * radiansPerDegree }),
            (round5, "icm20948 0x69", [-4096, 2048, 8192].map { $0 / 8192 * g }, [131, -655, 0].map { $0 / 65.5 * radiansPerDegree }),
            // 12-bit digits (the register pair shifted right by four) at 1.95 mg (AGR) and 2 mg (DLHC) at ±4 g.
            (round5, "lsm303 0x19", [512, -1024, 1000].map { $0 * 1.95e-3 * g }, nil),
            (round6, "lsm303 0x19", [-300, 700, 950].map { $0 * 2e-3 * g }, nil),
        ]
        for (round, key, accel, gyro) in inertial {
            guard let v = Self.inertialReading(round, key) else { XCTFail("no reading for \(key)"); continue }
            XCTAssertEqual(v.gyro == nil, gyro == nil, "\(key): a gyroscope reading where there is none, or none where there is one")
            for i in 0..<3 {
                XCTAssertEqual(v.accel[i], accel[i], accuracy: 0.002, "\(key) accel \(i)")
                if let got = v.gyro, let want = gyro { XCTAssertEqual(got[i], want[i], accuracy: 0.0002, "\(key) gyro \(i)") }
            }
        }
        XCTAssertTrue(round4.contains("temperature 36.5 °C"), "MPU-6050 temperature: raw 0 is 36.53 °C")
        XCTAssertTrue(round4.contains("VM-PROBE-EXIT 0"), round4)
        func line(_ round: String, _ key: String) -> String {
            round.split(separator: "\n").first { $0.hasPrefix("read \(key): ") }.map(String.init) ?? ""
        }
        XCTAssertTrue(line(round5, "lsm9ds1 0x6b").contains("temperature 30.0 °C"), "LSM9DS1: 80 / 16 + 25 °C")
        XCTAssertTrue(line(round5, "icm20948 0x69").contains("temperature 31.0 °C"), "ICM-20948: 3339 / 333.87 + 21 °C")
        for round in [round5, round6] {
            let lsm303 = line(round, "lsm303 0x19")
            XCTAssertTrue(lsm303.hasSuffix("(10.0 Hz, ±4.0 g, no gyroscope)"), lsm303)
            XCTAssertFalse(lsm303.contains("temperature") || lsm303.contains("SATURATED"), lsm303)
        }
        XCTAssertTrue(round5.contains("VM-PROBE-EXIT 0"), round5)
        XCTAssertTrue(round6.contains("VM-PROBE-EXIT 0"), round6)
        try checkBlackBoxReplay(round7, vmSeconds: vmSeconds)
    }

    /// Round 7: the recording the VM's daemon saved, replayed here through the real drivers, gives the data
    /// log the VM's daemon wrote up to the save (CALIBRATION objects aside: their `file` is the replay's copy).
    func checkBlackBoxReplay(_ round: String, vmSeconds: Double) throws {
        XCTAssertTrue(round.contains("VM-RUN-EXIT 0"), round)
        XCTAssertTrue(round.contains("black box saved"), round)
        let recording = try XCTUnwrap(Self.base64Block(round, "VM-BLACKBOX"), "no recording on the console")
        let vmLog = try XCTUnwrap(Self.base64Block(round, "VM-DATALOG"), "no data log on the console")
        XCTAssertFalse(recording.isEmpty, "empty recording")
        let dir = temporaryDirectory("vm-blackbox")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("vm.bbx")
        try recording.write(to: file)
        let replayLog = dir.appendingPathComponent("replay.ndjson")
        let (status, _, err) = try runBearing(["replay", file.path, "--fast", "--socket", dir.appendingPathComponent("s.sock").path,
                                               "--data-log", replayLog.path])
        XCTAssertEqual(status, 0, err)
        func lines(_ data: Data) -> [Substring] {
            String(decoding: data, as: UTF8.self).split(separator: "\n").filter { !$0.contains("\"class\":\"CALIBRATION\"") }
        }
        let got = lines(try Data(contentsOf: replayLog)), live = lines(vmLog)
        XCTAssertTrue(got.contains { $0.contains("\"class\":\"ATT\"") }, "no ATT from the replayed drivers")
        // The VM's daemon ran on a moment after the save: its log is compared up to the replay's length.
        XCTAssertLessThanOrEqual(got.count, live.count, "the replay published more than the live daemon")
        let want = Array(live.prefix(got.count))
        if got != want {
            let a = dir.appendingPathComponent("vm.ndjson"), b = dir.appendingPathComponent("replay-compared.ndjson")
            try (want.joined(separator: "\n") + "\n").write(to: a, atomically: true, encoding: .utf8)
            try (got.joined(separator: "\n") + "\n").write(to: b, atomically: true, encoding: .utf8)
            let diff = Process()
            diff.executableURL = URL(fileURLWithPath: "/usr/bin/diff")
            diff.arguments = [a.path, b.path]
            let out = Pipe()
            diff.standardOutput = out
            try diff.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            diff.waitUntilExit()
            XCTFail("the replay's data log differs from the VM's (< VM, > replay):\n\(text)")
        }
        let records = err.split(separator: "\n").first { $0.hasPrefix("bearing replay: ") && $0.contains(" records ") }
            .flatMap { $0.split(separator: " ").dropFirst(2).first } ?? "?"
        print("kernel-I2C black box: \(records) records, \(recording.count) bytes recorded in the VM, \(got.count) data-log lines "
              + "compared (of \(live.count) live), VM \(String(format: "%.0f", vmSeconds)) s")
    }

    /// The bytes of a base64 block between `MARKER-BEGIN` and `MARKER-END` lines, whitespace and line breaks ignored.
    static func base64Block(_ text: String, _ marker: String) -> Data? {
        guard let begin = text.range(of: "\(marker)-BEGIN\n"),
              let end = text.range(of: "\(marker)-END", range: begin.upperBound..<text.endIndex) else { return nil }
        return Data(base64Encoded: String(text[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }))
    }

    /// The accelerometer and gyroscope vectors of a `read CHIP ADDRESS: accel x … [gyro x … rad/s]` line
    /// (no gyroscope vector from an accelerometer alone).
    static func inertialReading(_ text: String, _ key: String) -> (accel: [Double], gyro: [Double]?)? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("read \(key): accel x ") }) else { return nil }
        let f = line.split(separator: " ")
        func vector(after word: String) -> [Double]? {
            guard let i = f.firstIndex(of: Substring(word)), f.count > i + 6, f[i + 1] == "x" else { return nil }
            let values = [f[i + 2], f[i + 4], f[i + 6]].compactMap { Double($0) }
            return values.count == 3 ? values : nil
        }
        guard let accel = vector(after: "accel") else { return nil }
        return (accel, vector(after: "gyro"))
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
