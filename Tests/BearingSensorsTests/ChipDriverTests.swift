import BearingModel
import BearingI2C
@testable import BearingSensors
import BearingSimulator
import BearingDaemon
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Each driver against its register-level model, through the same I2CBus protocol it runs on.
final class ChipDriverTests: XCTestCase {
    /// µT per count at each chip's default range, for the quantisation tolerance.
    let resolution: [String: Double] = [
        "hmc5883l": 1 / 10.9, "qmc5883l": 1 / 120, "lis3mdl": 1 / 68.42, "lis2mdl": 0.15,
        "mmc5983ma": 1 / 163.84, "bmm150": 0.4, "ak09916": 0.15, "ak8963": 0.15 * 1.2,
    ]

    struct Rig {
        let bus: SimulatedI2CBus
        let model: RegisterChipModel
        let driver: any MagnetometerDriver
        /// The field the model senses; tests change it between reads.
        let field: FieldBox
        var sleeps: Int { counter.value }
        let counter: Counter
    }

    final class Counter: @unchecked Sendable { var value = 0 }

    func rig(_ chip: String, field: Vector3) throws -> Rig {
        let bus = SimulatedI2CBus(path: "/dev/i2c-sim")
        let box = FieldBox(field)
        let model = try XCTUnwrap(ChipModels.attach(chip: chip, to: bus, field: { box.value }))
        let type = try XCTUnwrap(MagnetometerChips.driver(named: chip))
        let address = model is AK09916Model || model is AK8963Model ? 0x0C : (model is LIS3MDLModel ? 0x1C : type.descriptor.addresses[0])
        let driver = type.init(bus: bus, address: address)
        let counter = Counter()
        driver.sleep = { _ in counter.value += 1 }
        return Rig(bus: bus, model: model, driver: driver, field: box, counter: counter)
    }

    final class FieldBox: @unchecked Sendable {
        var value: Vector3
        init(_ v: Vector3) { value = v }
    }

    func testEveryChipReadsTheFieldItsModelSenses() throws {
        let vectors = [Vector3(20.1, -3.4, 44.7), Vector3(-35.5, 12.25, -8.0), Vector3(0.5, 48.0, -40.0)]
        for chip in ChipModels.names {
            for v in vectors {
                let r = try rig(chip, field: v)
                try r.driver.identify()
                _ = try r.driver.configure(MagnetometerSettings())
                let reading = try r.driver.read()
                let tol = resolution[chip]! * 1.01
                XCTAssertFalse(reading.overflow, chip)
                XCTAssertEqual(reading.field.x, v.x, accuracy: tol, "\(chip) x of \(v)")
                XCTAssertEqual(reading.field.y, v.y, accuracy: tol, "\(chip) y of \(v)")
                XCTAssertEqual(reading.field.z, v.z, accuracy: tol, "\(chip) z of \(v)")
            }
        }
    }

    func testSuccessiveReadsFollowAChangingField() throws {
        for chip in ChipModels.names {
            let r = try rig(chip, field: Vector3(10, 0, 0))
            let (driver, box) = (r.driver, r.field)
            try driver.identify()
            _ = try driver.configure(MagnetometerSettings())
            for x in stride(from: -40.0, through: 40, by: 20) {
                box.value = Vector3(x, -x / 2, 30)
                let r = try driver.read()
                XCTAssertEqual(r.field.x, x, accuracy: resolution[chip]! * 1.01, chip)
                XCTAssertEqual(r.field.y, -x / 2, accuracy: resolution[chip]! * 1.01, chip)
            }
        }
    }

    func testWrongChipAtTheAddressIsNamed() throws {
        let bus = SimulatedI2CBus(path: "/dev/i2c-1")
        ChipModels.attach(chip: "lis2mdl", to: bus, address: 0x1E) { Vector3(1, 2, 3) }
        let hmc = HMC5883L(bus: bus, address: 0x1E)
        XCTAssertThrowsError(try hmc.identify()) { error in
            guard case let .wrongChip(_, _, address, register, found, expected)? = error as? MagnetometerError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(address, 0x1E)
            XCTAssertEqual(register, 0x0A)
            XCTAssertEqual(found, [0, 0, 0])
            XCTAssertEqual(expected, Array("H43".utf8))
            XCTAssertTrue("\(error)".contains("/dev/i2c-1 0x1e: not a Honeywell HMC5883L: ID register 0x0a reads 0x00 0x00 0x00, expected 0x48 0x34 0x33"), "\(error)")
        }
        // And the right driver accepts it.
        XCTAssertNoThrow(try LIS2MDL(bus: bus, address: 0x1E).identify())
    }

    func testConfigureWritesTheDocumentedRegisters() throws {
        var s = MagnetometerSettings()
        s.rate = 12
        s.rangeMicrotesla = 180
        let cases: [(String, [(UInt8, UInt8)])] = [
            ("hmc5883l", [(0x00, 0x60 | 4 << 2), (0x01, 2 << 5), (0x02, 0x00)]),       // 15 Hz, ±1.9 G, continuous
            ("qmc5883l", [(0x0B, 0x01), (0x09, 0 << 4 | 1 << 2 | 0x01)]),              // ±2 G, 50 Hz, continuous
            ("lis3mdl", [(0x20, 0x60 | 5 << 2), (0x21, 0x00), (0x23, 0x0C), (0x24, 0x40), (0x22, 0x00)]),
            ("lis2mdl", [(0x60, 0x80 | 1 << 2), (0x61, 0x03), (0x62, 0x10)]),
            ("mmc5983ma", [(0x0A, 0x00), (0x0B, 0x00)]),
            ("bmm150", [(0x4B, 0x01), (0x51, 4), (0x52, 14), (0x4C, 4 << 3)]),         // 15 Hz, normal mode
            ("ak09916", [(0x32, 0x01), (0x31, 0x00), (0x31, 0x04)]),                    // soft reset, 20 Hz
            ("ak8963", [(0x0B, 0x01), (0x0A, 0x00), (0x0A, 0x0F), (0x0A, 0x00), (0x0A, 0x16)]),  // fuse ROM, 16-bit 100 Hz
        ]
        for (chip, expected) in cases {
            let r = try rig(chip, field: Vector3(1, 1, 1))
            try r.driver.identify()
            let chosen = try r.driver.configure(s)
            XCTAssertGreaterThanOrEqual(chosen.rate, chip == "mmc5983ma" ? 12 : 12, chip)
            let writes = r.model.writes.map { [$0.register, $0.value] }
            for (reg, value) in expected {
                XCTAssertTrue(writes.contains([reg, value]), "\(chip): expected write \(I2CError.hex(reg)) = \(I2CError.hex(value)); got \(writes)")
            }
        }
    }

    func testOverflowIsReported() throws {
        let cases: [(String, Double)] = [
            ("hmc5883l", 200), ("qmc5883l", 300), ("lis3mdl", 600), ("lis2mdl", 5000),
            ("mmc5983ma", 900), ("bmm150", 2500), ("ak09916", 5000), ("ak8963", 5000),
        ]
        for (chip, strength) in cases {
            let r = try rig(chip, field: Vector3(strength, 10, -10))
            try r.driver.identify()
            _ = try r.driver.configure(MagnetometerSettings())
            XCTAssertTrue(try r.driver.read().overflow, "\(chip) at \(strength) µT")
        }
    }

    func testDataNeverReadyGivesUpAfterTheBoundedPoll() throws {
        for chip in ChipModels.names {
            let r = try rig(chip, field: Vector3(1, 2, 3))
            r.model.neverReady = true
            try r.driver.identify()
            var s = MagnetometerSettings()
            s.readyPolls = 7
            _ = try r.driver.configure(s)
            XCTAssertThrowsError(try r.driver.read(), chip) { error in
                guard case .dataNotReady(_, _, _, let polls)? = error as? MagnetometerError else { return XCTFail("\(chip): \(error)") }
                XCTAssertEqual(polls, 7)
            }
        }
    }

    func testSlowConversionIsWaitedFor() throws {
        for chip in ChipModels.names {
            let r = try rig(chip, field: Vector3(5, 6, 7))
            r.model.readyAfterPolls = 3
            try r.driver.identify()
            _ = try r.driver.configure(MagnetometerSettings())
            let reading = try r.driver.read()
            XCTAssertEqual(reading.field.x, 5, accuracy: resolution[chip]! * 1.01, chip)
            XCTAssertGreaterThanOrEqual(r.sleeps, 3, chip)
        }
    }

    func testBusErrorMidwayNamesBusAddressAndRegister() throws {
        for chip in ChipModels.names {
            let r = try rig(chip, field: Vector3(5, 6, 7))
            try r.driver.identify()
            _ = try r.driver.configure(MagnetometerSettings())
            _ = try r.driver.read()
            // The BMM150 reads a sample in one transfer; the others need at least two.
            r.bus.fail(after: chip == "bmm150" ? 0 : 1, errno: EREMOTEIO)
            XCTAssertThrowsError(try r.driver.read(), chip) { error in
                guard case .bus(let e)? = error as? MagnetometerError else { return XCTFail("\(chip): \(error)") }
                XCTAssertTrue(e.isNoAnswer)
                XCTAssertNotNil(e.register)
                XCTAssertTrue(e.description.hasPrefix("nothing answers at 0x"), e.description)
                XCTAssertTrue(e.description.contains("/dev/i2c-sim"), e.description)
            }
            r.bus.clearFault()
            XCTAssertNoThrow(try r.driver.read(), "\(chip) recovers once the bus does")
        }
    }

    func testAddressOwnedByAKernelDriverSaysSo() {
        let bus = SimulatedI2CBus(path: "/dev/i2c-1")
        ChipModels.attach(chip: "hmc5883l", to: bus) { .zero }
        bus.markBusy(0x1E)
        XCTAssertThrowsError(try HMC5883L(bus: bus, address: 0x1E).identify()) { error in
            XCTAssertTrue("\(error)".hasPrefix("a kernel driver owns 0x1e on /dev/i2c-1"), "\(error)")
        }
        XCTAssertEqual(try bus.probe(address: 0x1E), .busy)
    }

    func testMMC5983MASetResetRemovesTheBridgeOffset() throws {
        let r = try rig("mmc5983ma", field: Vector3(20, -10, 40))
        let driver = r.driver as! MMC5983MA
        let model = r.model as! MMC5983MAModel
        try driver.identify()
        _ = try driver.configure(MagnetometerSettings())
        let withSR = try driver.read()
        XCTAssertEqual(withSR.field.x, 20, accuracy: 0.01)
        XCTAssertEqual(driver.bridgeOffset?.x ?? .nan, model.bridgeOffset.x, accuracy: 0.01)
        XCTAssertEqual(driver.bridgeOffset?.y ?? .nan, model.bridgeOffset.y, accuracy: 0.01)
        driver.setReset = false
        let plain = try driver.read()
        // Without SET/RESET the bridge offset stays in (after the last RESET the polarity is negative).
        XCTAssertGreaterThan(abs(plain.field.x - 20), 5)
    }

    func testBMM150NeedsPowerOnBeforeItsIDReads() throws {
        let bus = SimulatedI2CBus()
        ChipModels.attach(chip: "bmm150", to: bus) { .zero }
        XCTAssertEqual(try bus.readByte(address: 0x10, register: 0x40), 0x00, "suspend mode")
        let d = BMM150(bus: bus, address: 0x10)
        d.sleep = { _ in }
        XCTAssertNoThrow(try d.identify())
        _ = try d.configure(MagnetometerSettings())
        XCTAssertEqual(d.trim.xyz1, 7170)
        XCTAssertEqual(d.trim.z1, 21391)
        XCTAssertEqual(d.trim.xy2, -3)
    }

    func testAK09916IsReachedThroughTheICM20948Bypass() throws {
        let bus = SimulatedI2CBus()
        ChipModels.attach(chip: "ak09916", to: bus) { Vector3(30, 0, 0) }
        XCTAssertEqual(try bus.probe(address: 0x0C), .absent, "hidden until the bypass opens")
        XCTAssertEqual(try bus.probe(address: 0x68), .present)
        let d = AK09916(bus: bus, address: 0x0C)
        d.sleep = { _ in }
        try d.identify()
        XCTAssertEqual(d.host, 0x68)
        XCTAssertEqual(try bus.probe(address: 0x0C), .present)
        _ = try d.configure(MagnetometerSettings())
        XCTAssertEqual(try d.read().field.x, 30, accuracy: 0.15)
    }

    func testAK09916WithoutHostOrChipSaysNothingAnswers() {
        let bus = SimulatedI2CBus(path: "/dev/i2c-1")
        let d = AK09916(bus: bus, address: 0x0C)
        d.sleep = { _ in }
        XCTAssertThrowsError(try d.identify()) { error in
            XCTAssertTrue("\(error)".hasPrefix("nothing answers at 0x69 on /dev/i2c-1"), "\(error)")
        }
    }

    /// Another chip at a host address (an MPU-6050 at 0x68) and nothing at the other: the wrong WHO_AM_I
    /// is what gets reported, not the silence at 0x69 — the same rule as the AK8963's.
    func testAK09916ReportsAHostWithTheWrongIDOverOneThatDoesNotAnswer() {
        let bus = SimulatedI2CBus(path: "/dev/i2c-1")
        ChipModels.attachInertial(chip: "mpu6050", to: bus) { .level }
        let d = AK09916(bus: bus, address: 0x0C)
        d.sleep = { _ in }
        XCTAssertThrowsError(try d.identify()) { error in
            guard case .wrongChip(_, _, let address, _, _, _)? = error as? MagnetometerError else {
                return XCTFail("expected a wrong-chip error, got \(error)")
            }
            XCTAssertEqual(address, 0x68, "\(error)")
        }
    }

    /// The LIS2MDL's registers are a left-handed frame: the driver negates Z, so a field along +Z reads +Z
    /// while the register holds negative counts.
    func testLIS2MDLReportsItsRawZNegatedAsARightHandedFrame() throws {
        let bus = SimulatedI2CBus()
        ChipModels.attach(chip: "lis2mdl", to: bus) { Vector3(10, -20, 45) }
        let d = LIS2MDL(bus: bus, address: 0x1E)
        d.sleep = { _ in }
        try d.identify()
        _ = try d.configure(MagnetometerSettings())
        let r = try d.read()
        let rawZ = Int16(bitPattern: UInt16(try bus.readByte(address: 0x1E, register: 0x6D)) << 8 | UInt16(try bus.readByte(address: 0x1E, register: 0x6C)))
        XCTAssertEqual(Int(rawZ), -300, "45 µT at 0.15 µT/LSB, negated")
        XCTAssertEqual(r.field.x, 10, accuracy: 0.15)
        XCTAssertEqual(r.field.y, -20, accuracy: 0.15)
        XCTAssertEqual(r.field.z, 45, accuracy: 0.15)
    }

    func testLIS3MDLModelRefusesAutoIncrementWithoutTheSubAddressFlag() throws {
        let bus = SimulatedI2CBus()
        ChipModels.attach(chip: "lis3mdl", to: bus) { .zero }
        let same = try bus.readBlock(address: 0x1C, register: 0x0F, count: 3)
        XCTAssertEqual(same, [0x3D, 0x3D, 0x3D])
        let inc = try bus.readBlock(address: 0x1C, register: 0x8F, count: 2)
        XCTAssertEqual(inc, [0x3D, 0x00])
    }

    func testAK8963IsReachedThroughTheMPU9250BypassAndAppliesItsFuseROMAdjustment() throws {
        let bus = SimulatedI2CBus()
        let model = try XCTUnwrap(ChipModels.attach(chip: "ak8963", to: bus) { Vector3(30, -20, 45) } as? AK8963Model)
        XCTAssertEqual(try bus.probe(address: 0x0C), .absent, "hidden until the bypass opens")
        let d = AK8963(bus: bus, address: 0x0C)
        d.sleep = { _ in }
        try d.identify()
        XCTAssertEqual(d.host, 0x68)
        _ = try d.configure(MagnetometerSettings())
        // ASA 0xB0, 0xB3, 0xA7: (ASA − 128) × 0.5 / 128 + 1.
        let asa = model.sensitivityAdjustment.map { (Double($0) - 128) * 0.5 / 128 + 1 }
        XCTAssertEqual(d.sensitivityAdjustment, Vector3(asa[0], asa[1], asa[2]))
        XCTAssertEqual(d.sensitivityAdjustment.x, 1.1875)
        let r = try d.read()
        XCTAssertEqual(r.field.x, 30, accuracy: 0.15 * asa[0])
        XCTAssertEqual(r.field.y, -20, accuracy: 0.15 * asa[1])
        XCTAssertEqual(r.field.z, 45, accuracy: 0.15 * asa[2])
        // Outside fuse ROM mode the ASA registers read 0: an adjustment read there would halve the field.
        XCTAssertEqual(try bus.readBlock(address: 0x0C, register: 0x10, count: 3), [0, 0, 0])
    }

    func testAK8963WithoutST2ReadGetsNoNewData() throws {
        let bus = SimulatedI2CBus()
        ChipModels.attach(chip: "ak8963", to: bus) { Vector3(1, 2, 3) }
        let d = AK8963(bus: bus, address: 0x0C)
        d.sleep = { _ in }
        try d.identify()
        _ = try d.configure(MagnetometerSettings())
        XCTAssertEqual(try bus.readByte(address: 0x0C, register: 0x02) & 0x01, 0x01)
        _ = try bus.readBlock(address: 0x0C, register: 0x03, count: 6)  // data without ST2
        XCTAssertEqual(try bus.readByte(address: 0x0C, register: 0x02) & 0x01, 0x00, "held until ST2 is read")
        _ = try bus.readByte(address: 0x0C, register: 0x09)
        XCTAssertEqual(try bus.readByte(address: 0x0C, register: 0x02) & 0x01, 0x01)
    }

    func testAK8963DoesNotTakeAnAK09916() throws {
        let bus = SimulatedI2CBus(path: "/dev/i2c-1")
        ChipModels.attach(chip: "ak09916", to: bus) { .zero }
        // Bypass closed: the only host is an ICM-20948, whose WHO_AM_I (75h on an MPU) is not an MPU-9250's.
        XCTAssertThrowsError(try AK8963(bus: bus, address: 0x0C).identify()) { error in
            XCTAssertTrue("\(error)".contains("not a InvenSense MPU-9250/9255: ID register 0x75 reads 0x00, expected one of 0x71, 0x73"), "\(error)")
        }
        let ak09916 = AK09916(bus: bus, address: 0x0C)
        ak09916.sleep = { _ in }
        try ak09916.identify()
        // Bypass open: WIA matches, but 01h holds the AK09916's WIA2.
        XCTAssertThrowsError(try AK8963(bus: bus, address: 0x0C).identify()) { error in
            XCTAssertTrue("\(error)".contains("an AK09916's WIA2 (ICM-20948): use chip ak09916"), "\(error)")
        }
        XCTAssertEqual(ChipProbe.identify(bus, address: 0x0C)?.descriptor.name, "ak09916")
    }
}
