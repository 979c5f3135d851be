import BearingModel
import BearingI2C
import BearingSensors
import BearingSimulator
import XCTest

/// The benchmark's replaying bus: the same answers again, in a loop, and a loud failure when the drivers
/// ask for something else.
final class ReplayBusTests: XCTestCase {
    func testReplaysTheRecordedReadsInALoopAndRefusesReadsOutOfStep() throws {
        let models = SimulatedI2CBus()
        var field = Vector3(20, -5, 40)
        ChipModels.attach(chip: "qmc5883l", to: models) { field }
        let bus = ReplayI2CBus(models)
        let driver = QMC5883L(bus: bus, address: 0x0D)
        driver.sleep = { _ in }
        try driver.identify()
        _ = try driver.configure(MagnetometerSettings())

        bus.startRecording()
        var recorded: [Vector3] = []
        for step in 0..<3 {
            field = Vector3(20 + Double(step), -5, 40)
            recorded.append(try driver.read().field)
        }
        try bus.replay()
        field = Vector3(-30, 0, 0)  // the models are no longer asked
        for round in 0..<2 {
            for want in recorded { XCTAssertEqual(try driver.read().field, want, "round \(round)") }
        }

        XCTAssertThrowsError(try bus.readByte(address: 0x0D, register: 0x0D)) { error in
            XCTAssertEqual((error as? I2CError)?.register, 0x0D)
            XCTAssertEqual((error as? I2CError)?.errno, 5)
        }
    }

    func testNothingRecordedIsAnError() {
        XCTAssertThrowsError(try ReplayI2CBus(SimulatedI2CBus()).replay())
    }
}
