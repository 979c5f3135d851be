import BearingModel
import BearingI2C
@testable import BearingSensors
import BearingSimulator
import BearingDaemon
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Each accelerometer/gyroscope driver (and the accelerometer-only LSM303) against its register-level
/// model, through the I2CBus protocol.
final class InertialDriverTests: XCTestCase {
    static let g = 9.80665
    static let radiansPerDegree = Double.pi / 180

    /// A model name, the driver that must identify it and the name it must report.
    struct Chip {
        var model: String
        var driver: String
        var identifiedAs: String
        /// The first register of the sample burst (as the driver sends it: the LSM303's has bit 7 set).
        var burst: UInt8
        /// °C per temperature LSB; nil for a chip that reports no temperature.
        var temperatureLSB: Double?

        /// The LSM303 is an accelerometer alone.
        var hasGyroscope: Bool { driver != "lsm303" }
    }

    static let chips = [
        Chip(model: "lsm6ds3", driver: "lsm6dsx", identifiedAs: "ST LSM6DS3", burst: 0x20, temperatureLSB: 1.0 / 16),
        Chip(model: "lsm6dsl", driver: "lsm6dsx", identifiedAs: "ST LSM6DSL", burst: 0x20, temperatureLSB: 1.0 / 256),
        Chip(model: "lsm6dsox", driver: "lsm6dsx", identifiedAs: "ST LSM6DSOX", burst: 0x20, temperatureLSB: 1.0 / 256),
        Chip(model: "lsm9ds1", driver: "lsm9ds1", identifiedAs: "ST LSM9DS1 (accel/gyro)", burst: 0x15, temperatureLSB: 1.0 / 16),
        Chip(model: "mpu6050", driver: "mpu6xxx", identifiedAs: "InvenSense MPU-6050", burst: 0x3B, temperatureLSB: 1.0 / 340),
        Chip(model: "mpu6500", driver: "mpu6xxx", identifiedAs: "InvenSense MPU-6500", burst: 0x3B, temperatureLSB: 1.0 / 333.87),
        Chip(model: "mpu9250", driver: "mpu6xxx", identifiedAs: "InvenSense MPU-9250", burst: 0x3B, temperatureLSB: 1.0 / 333.87),
        Chip(model: "mpu9255", driver: "mpu6xxx", identifiedAs: "InvenSense MPU-9255", burst: 0x3B, temperatureLSB: 1.0 / 333.87),
        Chip(model: "icm20948", driver: "icm20948", identifiedAs: "TDK ICM-20948 (accel/gyro)", burst: 0x2D, temperatureLSB: 1.0 / 333.87),
        Chip(model: "lsm303dlhc", driver: "lsm303", identifiedAs: "ST LSM303DLHC (accelerometer)", burst: 0xA8, temperatureLSB: nil),
        Chip(model: "lsm303agr", driver: "lsm303", identifiedAs: "ST LSM303AGR (accelerometer)", burst: 0xA8, temperatureLSB: nil),
        // Without a magnetometer at 0x1E the two cannot be told apart.
        Chip(model: "lsm303", driver: "lsm303", identifiedAs: "ST LSM303DLHC/LSM303AGR (accelerometer)", burst: 0xA8,
             temperatureLSB: nil),
    ]

    /// Datasheet full scales and LSB sizes, written out here independently of the drivers' tables:
    /// (full scale, m/s² per LSB) and (full scale, rad/s per LSB; none without a gyroscope). The LSM303's
    /// LSB is one 12-bit high-resolution digit: the DLHC's (also used when the variant is unknown) or the AGR's.
    static func ranges(_ chip: Chip) -> (accel: [(Double, Double)], gyro: [(Double, Double)]) {
        let mg = g / 1000, mdps = radiansPerDegree / 1000
        switch chip.driver {
        case "lsm303" where chip.model == "lsm303agr":
            return ([(2, 0.98 * mg), (4, 1.95 * mg), (8, 3.9 * mg), (16, 11.72 * mg)], [])
        case "lsm303":
            return ([(2, 1 * mg), (4, 2 * mg), (8, 4 * mg), (16, 12 * mg)], [])
        case "lsm6dsx":
            return ([(2, 0.061 * mg), (4, 0.122 * mg), (8, 0.244 * mg), (16, 0.488 * mg)],
                    [(125, 4.375 * mdps), (245, 8.75 * mdps), (500, 17.5 * mdps), (1000, 35 * mdps), (2000, 70 * mdps)])
        case "lsm9ds1":
            return ([(2, 0.061 * mg), (4, 0.122 * mg), (8, 0.244 * mg), (16, 0.732 * mg)],
                    [(245, 8.75 * mdps), (500, 17.5 * mdps), (2000, 70 * mdps)])
        default:
            return ([(2, g / 16384), (4, g / 8192), (8, g / 4096), (16, g / 2048)],
                    [(250, radiansPerDegree / 131), (500, radiansPerDegree / 65.5), (1000, radiansPerDegree / 32.8),
                     (2000, radiansPerDegree / 16.4)])
        }
    }

    final class MotionBox: @unchecked Sendable {
        var value: Motion
        init(_ v: Motion) { value = v }
    }

    final class Counter: @unchecked Sendable { var value = 0 }

    struct Rig {
        let bus: SimulatedI2CBus
        let model: InertialChipModel
        let driver: any InertialDriver
        let motion: MotionBox
        let sleeps: Counter
    }

    func rig(_ chip: Chip, motion: Motion = .level, address: UInt8? = nil) throws -> Rig {
        let bus = SimulatedI2CBus(path: "/dev/i2c-sim")
        let box = MotionBox(motion)
        let model = try XCTUnwrap(ChipModels.attachInertial(chip: chip.model, to: bus, address: address) { box.value })
        let type = try XCTUnwrap(InertialChips.driver(named: chip.driver))
        let driver = type.init(bus: bus, address: address ?? type.descriptor.addresses[0])
        let sleeps = Counter()
        driver.sleep = { _ in sleeps.value += 1 }
        return Rig(bus: bus, model: model, driver: driver, motion: box, sleeps: sleeps)
    }

    func testEveryChipIsIdentifiedAsItsFamilyMember() throws {
        for chip in Self.chips {
            let r = try rig(chip)
            try r.driver.identify()
            XCTAssertEqual(r.driver.identifiedName, chip.identifiedAs, chip.model)
            let bus = SimulatedI2CBus()
            ChipModels.attachInertial(chip: chip.model, to: bus) { .level }
            XCTAssertEqual(ChipProbe.identifyInertial(bus, address: type(of: r.driver).descriptor.addresses[0])?.identifiedName,
                           chip.identifiedAs, chip.model)
        }
    }

    func testWrongChipNamesBusAddressRegisterFoundAndExpected() throws {
        // (driver, the model put at its address instead, WHO_AM_I register, what it reads, what was expected)
        let cases: [(String, String, UInt8, UInt8, UInt8, [UInt8])] = [
            ("lsm6dsx", "lsm9ds1", 0x6A, 0x0F, 0x68, [0x69, 0x6A, 0x6C]),
            ("lsm9ds1", "lsm6dsox", 0x6B, 0x0F, 0x6C, [0x68]),
            ("mpu6xxx", "icm20948", 0x68, 0x75, 0x00, [0x68, 0x70, 0x71, 0x73]),
            ("icm20948", "mpu6050", 0x69, 0x00, 0x00, [0xEA]),
            ("lsm303", "lsm6dsox", 0x19, 0x0F, 0x6C, [0x33]),
            ("lsm6dsx", "lsm303agr", 0x6A, 0x0F, 0x33, [0x69, 0x6A, 0x6C]),
        ]
        for (driver, other, address, register, found, expected) in cases {
            let bus = SimulatedI2CBus(path: "/dev/i2c-3")
            ChipModels.attachInertial(chip: other, to: bus, address: address) { .level }
            let d = try XCTUnwrap(InertialChips.driver(named: driver)).init(bus: bus, address: address)
            XCTAssertThrowsError(try d.identify(), driver) { error in
                guard case let .wrongChip(_, b, a, reg, f, e)? = error as? SensorError else { return XCTFail("\(driver): \(error)") }
                XCTAssertEqual(b, "/dev/i2c-3")
                XCTAssertEqual(a, address)
                XCTAssertEqual(reg, register)
                XCTAssertEqual(f, [found])
                XCTAssertEqual(e, expected)
                XCTAssertTrue("\(error)".hasPrefix("/dev/i2c-3 \(I2CError.hex(address)): not a "), "\(error)")
            }
        }
        let bus = SimulatedI2CBus(path: "/dev/i2c-1")
        ChipModels.attachInertial(chip: "lsm9ds1", to: bus) { .level }
        XCTAssertThrowsError(try LSM6DSx(bus: bus, address: 0x6A).identify()) { error in
            XCTAssertEqual("\(error)", "/dev/i2c-1 0x6a: not a ST LSM6DS3/LSM6DSL/LSM6DSOX: ID register 0x0f reads 0x68, expected one of 0x69, 0x6a, 0x6c")
        }
        ChipModels.attachInertial(chip: "mpu6050", to: bus, address: 0x19) { .level }
        XCTAssertThrowsError(try LSM303(bus: bus, address: 0x19).identify()) { error in
            XCTAssertEqual("\(error)", "/dev/i2c-1 0x19: not a ST LSM303DLHC/LSM303AGR (accelerometer): ID register 0x0f reads 0x00, expected 0x33")
        }
    }

    func testConfigureWritesTheDocumentedRegisters() throws {
        var s = InertialSettings()
        s.rate = 100
        s.accelerationRangeG = 5
        s.angularRateRangeDPS = 300
        // LSM6DSx: 104 Hz (code 4), ±8 g (FS_XL 11), ±500 °/s (FS_G 01); reset, then BDU + IF_INC.
        // LSM9DS1: 119 Hz (code 3), ±8 g (11), ±500 °/s (01). MPU: divider 9 (100 Hz), DLPF 3 (42 Hz ≤ 50),
        // FS_SEL 1, AFS_SEL 2, DATA_RDY_EN. LSM303: BDU + FS 10 (±8 g) + HR, high-pass filter off, then 100 Hz
        // (code 5) with X/Y/Z on; the gyroscope range asked for is ignored.
        let cases: [(String, [(UInt8, UInt8)], InertialConfiguration)] = [
            ("lsm6dsox", [(0x12, 0x05), (0x12, 0x44), (0x10, 0x4C), (0x11, 0x44)], .init(rate: 104, accelerationRangeG: 8, angularRateRangeDPS: 500)),
            ("lsm9ds1", [(0x22, 0x05), (0x22, 0x44), (0x20, 0x78), (0x10, 0x68)], .init(rate: 119, accelerationRangeG: 8, angularRateRangeDPS: 500)),
            ("mpu6050", [(0x6B, 0x01), (0x6C, 0x00), (0x1A, 0x03), (0x19, 9), (0x1B, 0x08), (0x1C, 0x10), (0x38, 0x01)],
             .init(rate: 100, accelerationRangeG: 8, angularRateRangeDPS: 500)),
            ("mpu9250", [(0x6B, 0x01), (0x6C, 0x00), (0x1A, 0x03), (0x19, 9), (0x1B, 0x08), (0x1C, 0x10), (0x1D, 0x03), (0x38, 0x01)],
             .init(rate: 100, accelerationRangeG: 8, angularRateRangeDPS: 500)),
            ("lsm303dlhc", [(0x23, 0xA8), (0x21, 0x00), (0x20, 0x57)], .init(rate: 100, accelerationRangeG: 8, angularRateRangeDPS: nil)),
            ("lsm303agr", [(0x23, 0xA8), (0x21, 0x00), (0x20, 0x57)], .init(rate: 100, accelerationRangeG: 8, angularRateRangeDPS: nil)),
        ]
        for (model, expected, chosen) in cases {
            let r = try rig(try XCTUnwrap(Self.chips.first { $0.model == model }))
            try r.driver.identify()
            XCTAssertEqual(try r.driver.configure(s), chosen, model)
            let writes = r.model.writes.map { [$0.register, $0.value] }
            XCTAssertEqual(writes, expected.map { [$0.0, $0.1] }, model)
        }
        // The MPU-6050 has no ACCEL_CONFIG2 (the 6500's 1Dh): nothing is written there.
        let mpu = try rig(Self.chips[4])
        _ = try mpu.driver.configure(s)
        XCTAssertFalse(mpu.model.writes.contains { $0.register == 0x1D })
    }

    func testICM20948ConfiguresBank2AndEndsInBank0() throws {
        var s = InertialSettings()
        s.rate = 100
        s.accelerationRangeG = 5
        s.angularRateRangeDPS = 300
        let r = try rig(Self.chips[8])
        let model = try XCTUnwrap(r.model as? ICM20948Model)
        try r.driver.identify()
        // 1.1 kHz / (1 + 10) = 100 Hz; DLPF 4 (23.9 Hz ≤ 50); GYRO_FS_SEL 1, ACCEL_FS_SEL 2, FCHOICE 1.
        XCTAssertEqual(try r.driver.configure(s), InertialConfiguration(rate: 100, accelerationRangeG: 8, angularRateRangeDPS: 500))
        let writes = model.bankedWrites.filter { $0.register != 0x7F }.map { [$0.bank, Int($0.register), Int($0.value)] }
        XCTAssertEqual(writes, [
            [0, 0x06, 0x01], [0, 0x07, 0x00],
            [2, 0x00, 10], [2, 0x01, 4 << 3 | 1 << 1 | 1], [2, 0x10, 0], [2, 0x11, 10], [2, 0x14, 4 << 3 | 2 << 1 | 1],
            [0, 0x11, 0x01],
        ])
        XCTAssertEqual(model.bank, 0)
        XCTAssertEqual(model.register(bank: 2, 0x01), 0x23)
    }

    func testScalingAtEveryFullScaleWithinOneLSB() throws {
        for chip in Self.chips {
            let (accelRanges, gyroRanges) = Self.ranges(chip)
            for (i, (accelFS, accelLSB)) in accelRanges.enumerated() {
                // Without a gyroscope the range asked for is ignored and the motion's rotation not sensed.
                let gyro: (Double, Double)? = gyroRanges.isEmpty ? nil : gyroRanges[i % gyroRanges.count]
                let gyroFS: Double = gyro?.0 ?? 500
                // Scales named first: Swift 6.0's type checker picks Double's `*` for the inline form.
                let forceScale: Double = accelFS * Self.g
                let rateScale: Double = gyroFS * Self.radiansPerDegree
                let force = Vector3(0.61, -0.37, 0.93) * forceScale
                let rate = Vector3(-0.83, 0.29, 0.51) * rateScale
                let r = try rig(chip, motion: Motion(specificForce: force, angularRate: rate, temperature: 31.7))
                var s = InertialSettings()
                s.accelerationRangeG = accelFS
                s.angularRateRangeDPS = gyroFS
                try r.driver.identify()
                let chosen = try r.driver.configure(s)
                XCTAssertEqual(chosen.accelerationRangeG, accelFS, chip.model)
                XCTAssertEqual(chosen.angularRateRangeDPS, gyro?.0, chip.model)
                let reading = try r.driver.read()
                let what = "\(chip.model) ±\(accelFS) g" + (gyro.map { " ±\($0.0) °/s" } ?? "")
                for (got, want) in [(reading.acceleration.x, force.x), (reading.acceleration.y, force.y), (reading.acceleration.z, force.z)] {
                    XCTAssertEqual(got, want, accuracy: accelLSB, what)
                }
                if let gyro {
                    let g = try XCTUnwrap(reading.angularRate, what)
                    for (got, want) in [(g.x, rate.x), (g.y, rate.y), (g.z, rate.z)] {
                        XCTAssertEqual(got, want, accuracy: gyro.1, what)
                    }
                } else {
                    XCTAssertNil(reading.angularRate, what)
                }
                XCTAssertFalse(reading.accelerationSaturated, what)
                XCTAssertFalse(reading.angularRateSaturated, what)
                if let lsb = chip.temperatureLSB {
                    XCTAssertEqual(reading.temperature ?? .nan, 31.7, accuracy: lsb, what)
                } else {
                    XCTAssertNil(reading.temperature, what)
                }
            }
            // The ±125 °/s gyro range only the LSM6DSx family has.
            if chip.driver == "lsm6dsx" {
                let rate = Vector3(1.5, -0.5, 0.25)
                let r = try rig(chip, motion: Motion(specificForce: .zero, angularRate: rate))
                var s = InertialSettings()
                s.angularRateRangeDPS = 100
                XCTAssertEqual(try r.driver.configure(s).angularRateRangeDPS, 125)
                XCTAssertEqual(try XCTUnwrap(r.driver.read().angularRate).x, 1.5, accuracy: 4.375 * Self.radiansPerDegree / 1000)
            }
        }
    }

    /// The LSM9DS1's accelerometer/gyroscope registers hold a left-handed frame (X reversed against its
    /// magnetometer's): the driver reverses X back, so a force and a rate along the magnetometer's +X read +X.
    func testLSM9DS1ReportsItsRawXReversedAsARightHandedFrame() throws {
        let bus = SimulatedI2CBus()
        ChipModels.attachInertial(chip: "lsm9ds1", to: bus) { Motion(specificForce: Vector3(3, 0, 9), angularRate: Vector3(0.5, 0, 0)) }
        let d = LSM9DS1(bus: bus, address: 0x6A)
        d.sleep = { _ in }
        try d.identify()
        _ = try d.configure(InertialSettings())
        let r = try d.read()
        // Raw X registers, little-endian: negative counts for the positive force and rate.
        let accelX = Int16(bitPattern: UInt16(try bus.readByte(address: 0x6A, register: 0x29)) << 8 | UInt16(try bus.readByte(address: 0x6A, register: 0x28)))
        let gyroX = Int16(bitPattern: UInt16(try bus.readByte(address: 0x6A, register: 0x19)) << 8 | UInt16(try bus.readByte(address: 0x6A, register: 0x18)))
        XCTAssertLessThan(accelX, 0)
        XCTAssertLessThan(gyroX, 0)
        XCTAssertEqual(r.acceleration.x, 3, accuracy: 0.01)
        XCTAssertEqual(try XCTUnwrap(r.angularRate).x, 0.5, accuracy: 0.001)
        XCTAssertEqual(r.acceleration.z, 9, accuracy: 0.01)
    }

    func testALevelBoardAtRestReadsOneGUpAndNoRotation() throws {
        for chip in Self.chips {
            let r = try rig(chip, motion: .level)
            _ = try r.driver.configure(InertialSettings())
            let reading = try r.driver.read()
            XCTAssertEqual(reading.acceleration.z, 9.80665, accuracy: 0.01, chip.model)
            XCTAssertEqual(reading.acceleration.x, 0, accuracy: 0.01, chip.model)
            XCTAssertEqual(reading.acceleration.y, 0, accuracy: 0.01, chip.model)
            if chip.hasGyroscope {
                XCTAssertEqual(try XCTUnwrap(reading.angularRate).length, 0, accuracy: 1e-9, chip.model)
            } else {
                XCTAssertNil(reading.angularRate, chip.model)
            }
        }
    }

    func testSuccessiveReadsFollowTheMotion() throws {
        for chip in Self.chips {
            let r = try rig(chip)
            _ = try r.driver.configure(InertialSettings())
            for step in stride(from: -1.5, through: 1.5, by: 0.75) {
                r.motion.value = Motion(specificForce: Vector3(step * Self.g, 0, Self.g), angularRate: Vector3(0, 0, step))
                let reading = try r.driver.read()
                XCTAssertEqual(reading.acceleration.x, step * Self.g, accuracy: 0.01, chip.model)
                if chip.hasGyroscope {
                    XCTAssertEqual(try XCTUnwrap(reading.angularRate).z, step, accuracy: 0.001, chip.model)
                } else {
                    XCTAssertNil(reading.angularRate, chip.model)
                }
            }
        }
    }

    func testDataReadyIsWaitedForAndTheWaitIsBounded() throws {
        for chip in Self.chips {
            let slow = try rig(chip)
            slow.model.readyAfterPolls = 3
            _ = try slow.driver.configure(InertialSettings())
            let before = slow.sleeps.value
            XCTAssertEqual(try slow.driver.read().acceleration.z, Self.g, accuracy: 0.01, chip.model)
            XCTAssertEqual(slow.sleeps.value - before, 3, chip.model)

            let dead = try rig(chip)
            dead.model.neverReady = true
            var s = InertialSettings()
            s.readyPolls = 7
            _ = try dead.driver.configure(s)
            let transfers = dead.bus.transfers
            XCTAssertThrowsError(try dead.driver.read(), chip.model) { error in
                guard case let .dataNotReady(_, bus, address, polls)? = error as? SensorError else { return XCTFail("\(chip.model): \(error)") }
                XCTAssertEqual(polls, 7)
                XCTAssertEqual(bus, "/dev/i2c-sim")
                XCTAssertEqual(address, dead.driver.address)
            }
            XCTAssertEqual(dead.bus.transfers - transfers, 7, "\(chip.model): seven status polls, no data read")
        }
    }

    func testSaturationIsReportedPerSensor() throws {
        for chip in Self.chips {
            // Defaults are ±4 g and ±500 °/s (±245/500 on the ST parts): 6 g and 700 °/s are beyond them
            // (the LSM303's ±4 g reaches 4.09 g at 2 mg per digit; it senses no rotation).
            let r = try rig(chip, motion: Motion(specificForce: Vector3(6 * Self.g, 0, Self.g)))
            _ = try r.driver.configure(InertialSettings())
            var reading = try r.driver.read()
            XCTAssertTrue(reading.accelerationSaturated, chip.model)
            XCTAssertFalse(reading.angularRateSaturated, chip.model)
            r.motion.value = Motion(specificForce: Vector3(0, 0, Self.g), angularRate: Vector3(0, -700 * Self.radiansPerDegree, 0))
            reading = try r.driver.read()
            XCTAssertFalse(reading.accelerationSaturated, chip.model)
            XCTAssertEqual(reading.angularRateSaturated, chip.hasGyroscope, chip.model)
        }
    }

    func testOneStatusPollAndOneBurstPerSample() throws {
        for chip in Self.chips {
            let r = try rig(chip)
            _ = try r.driver.configure(InertialSettings())
            for _ in 0..<3 {
                let (transfers, blocks) = (r.bus.transfers, r.bus.blockReads)
                _ = try r.driver.read()
                XCTAssertEqual(r.bus.blockReads - blocks, 1, chip.model)
                XCTAssertEqual(r.bus.transfers - transfers, 2, chip.model)
            }
        }
    }

    func testBusErrorMidwayNamesBusAddressAndRegisterAndTheNextReadRecovers() throws {
        for chip in Self.chips {
            let r = try rig(chip)
            _ = try r.driver.configure(InertialSettings())
            _ = try r.driver.read()
            r.bus.fail(after: 1, errno: EREMOTEIO)   // the status poll passes, the burst fails
            XCTAssertThrowsError(try r.driver.read(), chip.model) { error in
                guard case .bus(let e)? = error as? SensorError else { return XCTFail("\(chip.model): \(error)") }
                XCTAssertEqual(e.bus, "/dev/i2c-sim")
                XCTAssertEqual(e.address, r.driver.address)
                XCTAssertEqual(e.register, chip.burst, chip.model)
                XCTAssertEqual(e.operation, .readBlock)
                XCTAssertTrue(e.description.contains("/dev/i2c-sim"), e.description)
            }
            r.bus.clearFault()
            XCTAssertEqual(try r.driver.read().acceleration.z, Self.g, accuracy: 0.01, "\(chip.model) recovers once the bus does")
        }
    }

    func testSTBlockDataUpdateKeepsBothBytesOfOneSample() throws {
        // A value that alternates between 255 and 256 counts (0x00FF / 0x0100) at ±2 g on each conversion.
        let lsb = 0.061 * Self.g / 1000
        let calls = Counter()
        let bus = SimulatedI2CBus()
        ChipModels.attachInertial(chip: "lsm6dsox", to: bus) {
            calls.value += 1
            return Motion(specificForce: Vector3(Double(calls.value % 2 == 0 ? 256 : 255) * lsb, 0, 0))
        }
        let d = LSM6DSx(bus: bus, address: 0x6A)
        d.sleep = { _ in }
        var s = InertialSettings()
        s.accelerationRangeG = 2
        _ = try d.configure(s)
        for _ in 0..<4 {
            let counts = (try d.read().acceleration.x / lsb).rounded()
            XCTAssertTrue(counts == 255 || counts == 256, "\(counts)")
        }
        // Without BDU each output read sees a new conversion: the low byte of one, the high byte of the next.
        try bus.writeByte(address: 0x6A, register: 0x12, value: 0x04)
        let b = try bus.readBlock(address: 0x6A, register: 0x28, count: 2)
        let torn = Int(Int16(bitPattern: UInt16(b[1]) << 8 | UInt16(b[0])))
        XCTAssertTrue(torn == 0x01FF || torn == 0x0000, "\(torn)")
    }

    func testSTAutoIncrementNeedsIFINC() throws {
        for (model, control) in [("lsm6dsox", UInt8(0x12)), ("lsm9ds1", UInt8(0x22))] {
            let bus = SimulatedI2CBus()
            ChipModels.attachInertial(chip: model, to: bus) { .level }
            XCTAssertEqual(try bus.readBlock(address: 0x6A, register: 0x0E, count: 2).last, model == "lsm9ds1" ? 0x68 : 0x6C)
            try bus.writeByte(address: 0x6A, register: control, value: 0x40)  // BDU only
            let id: UInt8 = model == "lsm9ds1" ? 0x68 : 0x6C
            XCTAssertEqual(try bus.readBlock(address: 0x6A, register: 0x0F, count: 3), [id, id, id], model)
        }
    }

    func testMPU6050SleepsUntilConfigured() throws {
        let r = try rig(Self.chips[4])
        XCTAssertEqual(try r.bus.readByte(address: 0x68, register: 0x6B), 0x40, "asleep at reset")
        XCTAssertEqual(try r.bus.readByte(address: 0x68, register: 0x3A), 0x00, "no data while asleep")
        _ = try r.driver.configure(InertialSettings())
        XCTAssertEqual(try r.bus.readByte(address: 0x68, register: 0x3A), 0x01)
        XCTAssertEqual(try r.bus.readByte(address: 0x68, register: 0x3A) & 0x01, 0x01, "the next sample")
    }

    func testInertialConfigureKeepsTheMagnetometerBypassOpen() throws {
        // ICM-20948 + AK09916: open the bypass, then configure the accel/gyro (through bank 2 and back).
        let icmBus = SimulatedI2CBus()
        ChipModels.attach(chip: "ak09916", to: icmBus) { Vector3(25, -5, 40) }
        let ak09916 = AK09916(bus: icmBus, address: 0x0C)
        ak09916.sleep = { _ in }
        try ak09916.identify()
        _ = try ak09916.configure(MagnetometerSettings())
        let icm = ICM20948(bus: icmBus, address: 0x68)
        icm.sleep = { _ in }
        try icm.identify()
        _ = try icm.configure(InertialSettings())
        XCTAssertEqual(try icm.read().acceleration.z, Self.g, accuracy: 0.01)
        XCTAssertEqual(try ak09916.read().field.x, 25, accuracy: 0.15)

        // MPU-9250 + AK8963.
        let mpuBus = SimulatedI2CBus()
        ChipModels.attach(chip: "ak8963", to: mpuBus) { Vector3(25, -5, 40) }
        let ak8963 = AK8963(bus: mpuBus, address: 0x0C)
        ak8963.sleep = { _ in }
        try ak8963.identify()
        _ = try ak8963.configure(MagnetometerSettings())
        let mpu = MPU6xxx(bus: mpuBus, address: 0x68)
        mpu.sleep = { _ in }
        _ = try mpu.configure(InertialSettings())
        XCTAssertEqual(try mpu.read().acceleration.z, Self.g, accuracy: 0.01)
        XCTAssertEqual(try ak8963.read().field.x, 25, accuracy: 0.2)
    }

    func testProbeIdentifiesInertialChipsByWhoAmIAtSharedAddresses() throws {
        let a = SimulatedI2CBus()
        let models = [
            ChipModels.attachInertial(chip: "lsm6dsl", to: a, address: 0x6A) { .level },
            ChipModels.attachInertial(chip: "lsm9ds1", to: a, address: 0x6B) { .level },
            ChipModels.attachInertial(chip: "mpu9250", to: a, address: 0x68) { .level },
        ]
        let found = try ChipProbe.scan(a)
        XCTAssertEqual(models.map { $0?.writes.count }, [0, 0, 0], "identification only reads")
        XCTAssertEqual(found.map(\.address), [0x68, 0x6A, 0x6B], "the AK8963 stays hidden behind the closed bypass")
        XCTAssertEqual(found[0].inertialChip, "mpu6xxx")
        XCTAssertEqual(found[0].inertialDisplayName, "InvenSense MPU-9250")
        XCTAssertEqual(found[0].chip, "ak8963")
        XCTAssertEqual(found[0].driverAddress, 0x0C)
        XCTAssertEqual(found[0].displayName, "InvenSense MPU-9250 (AK8963 via bypass at 0x0c)")
        XCTAssertEqual(found[1].inertialDisplayName, "ST LSM6DSL")
        XCTAssertNil(found[1].chip)
        XCTAssertEqual(found[2].inertialChip, "lsm9ds1")
        XCTAssertEqual(found[2].inertialConfidence, .high)
        XCTAssertEqual(a.blockReads, 0)

        let b = SimulatedI2CBus()
        ChipModels.attachInertial(chip: "icm20948", to: b, address: 0x68) { .level }
        ChipModels.attachInertial(chip: "mpu6050", to: b, address: 0x69) { .level }
        let found2 = try ChipProbe.scan(b)
        XCTAssertEqual(found2.map(\.address), [0x68, 0x69])
        XCTAssertEqual(found2[0].inertialChip, "icm20948")
        XCTAssertEqual(found2[0].chip, "ak09916")
        XCTAssertEqual(found2[1].inertialDisplayName, "InvenSense MPU-6050")
        XCTAssertNil(found2[1].chip)

        let c = SimulatedI2CBus()
        ChipModels.attachInertial(chip: "lsm9ds1", to: c, address: 0x6B) { .level }
        ChipModels.attach(chip: "lis3mdl", to: c, address: 0x1E) { Vector3(20, 0, 40) }
        XCTAssertEqual(try ChipProbe.scan(c).first?.displayName, "ST LIS3MDL (or the LSM9DS1's magnetometer)")

        XCTAssertEqual(try ChipProbe.findInertial(a, chip: nil, address: nil).identifiedName, "ST LSM6DSL")
        XCTAssertEqual(try ChipProbe.findInertial(b, chip: "mpu6xxx", address: nil).address, 0x69)
        XCTAssertThrowsError(try ChipProbe.findInertial(b, chip: "bno055", address: nil)) { error in
            XCTAssertTrue("\(error)".contains("unknown chip; supported: lsm6dsx, lsm9ds1, mpu6xxx, icm20948, lsm303"), "\(error)")
        }
        XCTAssertThrowsError(try ChipProbe.findInertial(SimulatedI2CBus(path: "/dev/i2c-1"), chip: nil, address: nil)) { error in
            XCTAssertTrue("\(error)".contains("no supported accelerometer/gyroscope found on /dev/i2c-1"), "\(error)")
        }
    }

    func testLSM303RatesRangesAndTwelveBitLeftJustifiedData() throws {
        // (rate, range wanted) → CTRL_REG1_A (ODR code << 4 | X/Y/Z on), CTRL_REG4_A (BDU | FS << 4 | HR), chosen.
        let cases: [(Double, Double?, UInt8, UInt8, Double, Double)] = [
            (1, 2, 0x17, 0x88, 1, 2),
            (0.2, nil, 0x17, 0x98, 1, 4),          // nothing slower than 1 Hz; ±4 g by default
            (30, 3, 0x47, 0x98, 50, 4),
            (400, 16, 0x77, 0xB8, 400, 16),
            (401, 9, 0x97, 0xB8, 1344, 16),        // 1.344 kHz is code 9 (code 8 is low-power only)
            (5000, 40, 0x97, 0xB8, 1344, 16),      // the fastest and widest when nothing is enough
        ]
        let chip = try XCTUnwrap(Self.chips.first { $0.model == "lsm303dlhc" })
        for (wantedRate, wantedRange, ctrl1, ctrl4, rate, range) in cases {
            let r = try rig(chip)
            var s = InertialSettings()
            s.rate = wantedRate
            s.accelerationRangeG = wantedRange
            s.angularRateRangeDPS = 2000
            let chosen = try r.driver.configure(s)
            XCTAssertEqual(chosen, InertialConfiguration(rate: rate, accelerationRangeG: range, angularRateRangeDPS: nil), "\(wantedRate) Hz")
            XCTAssertEqual(chosen.description, "\(rate) Hz, ±\(range) g, no gyroscope")
            XCTAssertEqual(r.model.registers[0x20], ctrl1, "\(wantedRate) Hz")
            XCTAssertEqual(r.model.registers[0x23], ctrl4, "\(wantedRate) Hz")
        }

        // −1.5 g, +0.25 g, +1 g at ±2 g (1 mg per digit): −1500, 250, 1000 digits, shifted left by four.
        let r = try rig(chip, motion: Motion(specificForce: Vector3(-1.5, 0.25, 1) * Self.g))
        var s = InertialSettings()
        s.accelerationRangeG = 2
        _ = try r.driver.configure(s)
        let reading = try r.driver.read()
        let raw = (0..<3).map { Int(Int16(bitPattern: UInt16(r.model.registers[0x29 + 2 * $0]) << 8 | UInt16(r.model.registers[0x28 + 2 * $0]))) }
        XCTAssertEqual(raw, [-1500 << 4, 250 << 4, 1000 << 4])
        XCTAssertEqual(reading.acceleration.x, -1.5 * Self.g, accuracy: 1e-9, "−1500 digits: the shift keeps the sign")
        XCTAssertEqual(reading.acceleration.y, 0.25 * Self.g, accuracy: 1e-9)
        XCTAssertEqual(reading.acceleration.z, Self.g, accuracy: 1e-9)
        XCTAssertFalse(reading.accelerationSaturated)

        // The 12-bit ends: 2047 and −2048 digits (±2.047/2.048 g at ±2 g) are saturated, 2046 is not.
        for (force, saturated) in [(2.046, false), (2.3, true), (-2.3, true), (-2.047, false)] {
            r.motion.value = Motion(specificForce: Vector3(0, force * Self.g, 0))
            XCTAssertEqual(try r.driver.read().accelerationSaturated, saturated, "\(force) g")
        }
        r.motion.value = Motion(specificForce: Vector3(0, 0, -2.0484 * Self.g))
        XCTAssertTrue(try r.driver.read().accelerationSaturated, "−2048 digits")
        XCTAssertEqual(r.model.registers[0x2D], 0x80)
    }

    func testLSM303MultiByteReadsNeedTheSubAddressMSBAndItStartsPoweredDown() throws {
        let bus = SimulatedI2CBus()
        ChipModels.attachInertial(chip: "lsm303", to: bus) { .level }
        XCTAssertEqual(try bus.readBlock(address: 0x19, register: 0x0F, count: 3), [0x33, 0x33, 0x33], "no MSB: one register")
        XCTAssertEqual(try bus.readBlock(address: 0x19, register: 0x8E, count: 2), [0x00, 0x33], "MSB: auto-increment")
        XCTAssertEqual(try bus.readByte(address: 0x19, register: 0x20), 0x07, "power-down, axes enabled at reset")
        XCTAssertEqual(try bus.readByte(address: 0x19, register: 0x27), 0x00, "no data while powered down")
        let d = LSM303(bus: bus, address: 0x19)
        d.sleep = { _ in }
        _ = try d.configure(InertialSettings())
        XCTAssertEqual(d.identifiedName, "ST LSM303DLHC/LSM303AGR (accelerometer)", "configure identifies first")
        XCTAssertEqual(try bus.readByte(address: 0x19, register: 0x27) & 0x08, 0x08, "ZYXDA once running")
        XCTAssertEqual(try d.read().acceleration.z, Self.g, accuracy: 0.02)
    }

    func testLSM303IsToldApartByTheMagnetometerBesideIt() throws {
        // AGR: its magnetometer is the LIS2MDL's chip (WHO_AM_I_M 4Fh = 0x40).
        let agr = SimulatedI2CBus()
        ChipModels.attachInertial(chip: "lsm303agr", to: agr) { .level }
        let a = try ChipProbe.scan(agr)
        XCTAssertEqual(a.map(\.address), [0x19, 0x1E])
        XCTAssertEqual(a[0].inertialChip, "lsm303")
        XCTAssertEqual(a[0].inertialDisplayName, "ST LSM303AGR (accelerometer)")
        XCTAssertEqual(a[0].inertialConfidence, .medium, "0x33 is also the LIS3DH's and LIS2DH12's WHO_AM_I")
        XCTAssertNil(a[0].chip)
        XCTAssertEqual(a[1].chip, "lis2mdl")
        XCTAssertEqual(a[1].displayName, "ST LIS2MDL / LSM303AGR")

        // DLHC: its magnetometer answers "H43" like an HMC5883L; identification only reads, on both devices.
        let dlhc = SimulatedI2CBus()
        let accel = try XCTUnwrap(ChipModels.attachInertial(chip: "lsm303", to: dlhc) { .level })
        let mag = HMC5883LModel { .zero }
        dlhc.attach(mag, at: 0x1E)
        let d = try ChipProbe.scan(dlhc)
        XCTAssertEqual(d.map(\.address), [0x19, 0x1E])
        XCTAssertEqual(d[0].inertialDisplayName, "ST LSM303DLHC (accelerometer)")
        XCTAssertEqual(d[1].chip, "hmc5883l")
        XCTAssertEqual(d[1].displayName, "Honeywell HMC5883L (or the LSM303DLHC's magnetometer)")
        XCTAssertEqual(accel.writes.count + mag.writes.count, 0, "identification only reads")
        XCTAssertEqual(try ChipProbe.findInertial(dlhc, chip: "lsm303", address: nil).identifiedName, "ST LSM303DLHC (accelerometer)")

        // Neither: the accelerometer alone, with the DLHC's (and Linux's) sensitivities.
        let alone = SimulatedI2CBus()
        ChipModels.attachInertial(chip: "lsm303", to: alone) { .level }
        XCTAssertEqual(try ChipProbe.findInertial(alone, chip: nil, address: nil).identifiedName,
                       "ST LSM303DLHC/LSM303AGR (accelerometer)")
        // An HMC5883L with no LSM303 keeps its own name.
        let hmc = SimulatedI2CBus()
        ChipModels.attach(chip: "hmc5883l", to: hmc) { .zero }
        XCTAssertEqual(try ChipProbe.scan(hmc).first?.displayName, "Honeywell HMC5883L")
    }
}
