import BearingI2C
import BearingModel
import BearingSensors
import BearingSimulator
import XCTest

/// `bearing probe --read` on the register models: each chip the scan finds configured and read once through
/// its driver, in chip axes; a chip that stops answering is a failed read that names it.
final class ProbeReadTests: XCTestCase {
    /// The first three numbers after "x ", "y ", "z " in a reading.
    func axes(_ text: String, after prefix: String = "") -> [Double] {
        let words = text.split(separator: " ")
        return ["x", "y", "z"].compactMap { axis in
            guard let i = words.firstIndex(where: { $0 == Substring(axis) }), i + 1 < words.count else { return nil }
            return Double(words[i + 1])
        }
    }

    func testAMagnetometerAndAnIMUAreReadOnceInChipAxes() throws {
        let bus = SimulatedI2CBus()
        ChipModels.attach(chip: "qmc5883l", to: bus, address: 0x0D) { Vector3(20, -5, 40) }
        ChipModels.attachInertial(chip: "lsm6dsl", to: bus, address: 0x6A) { .level }
        let found = try ChipProbe.scan(bus)
        let magnetometer = try XCTUnwrap(found.first { $0.chip == "qmc5883l" }.flatMap { ProbeRead.magnetometer($0, bus: bus, rate: 10) })
        XCTAssertFalse(magnetometer.failed, "\(magnetometer)")
        XCTAssertTrue(magnetometer.description.hasPrefix("read qmc5883l 0x0d: x "), magnetometer.description)
        let field = axes(magnetometer.description)
        XCTAssertEqual(field.count, 3, magnetometer.description)
        for (got, want) in zip(field, [20.0, -5, 40]) { XCTAssertEqual(got, want, accuracy: 0.5, magnetometer.description) }

        let imu = try XCTUnwrap(found.first { $0.inertialChip != nil }.flatMap { ProbeRead.inertial($0, bus: bus, rate: 100) })
        XCTAssertFalse(imu.failed, "\(imu)")
        XCTAssertTrue(imu.description.hasPrefix("read lsm6dsx 0x6a: accel x "), imu.description)
        let a = axes(imu.description)
        XCTAssertEqual(a.count, 3, imu.description)
        XCTAssertEqual(Vector3(a[0], a[1], a[2]).length, 9.81, accuracy: 0.2, "a level board reads 1 g: \(imu.description)")
        XCTAssertNil(found.first { $0.chip == nil && $0.inertialChip == nil }.flatMap { ProbeRead.magnetometer($0, bus: bus, rate: 10) })
    }

    func testAChipThatStopsAnsweringIsAFailedReadNamingIt() throws {
        let bus = SimulatedI2CBus()
        ChipModels.attach(chip: "qmc5883l", to: bus, address: 0x0D) { Vector3(20, 0, 40) }
        let finding = try XCTUnwrap(ChipProbe.scan(bus).first)
        let silent = SimulatedI2CBus()
        let read = try XCTUnwrap(ProbeRead.magnetometer(finding, bus: silent, rate: 10))
        XCTAssertTrue(read.failed)
        XCTAssertTrue(read.description.hasPrefix("read qmc5883l 0x0d: failed: "), read.description)
    }
}
