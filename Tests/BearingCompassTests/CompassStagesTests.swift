import BearingAttitude
import BearingCompass
import BearingDaemon
import BearingModel
import BearingPublishing
import BearingCalibration
import OpenCombine
import XCTest

/// The compass stages: the calibration and declination in force when a sample arrives are the ones applied.
final class CompassStagesTests: XCTestCase {
    func sample(_ chip: String = "qmc5883l", _ field: Vector3 = Vector3(20, 0, 40)) -> MagneticSample {
        MagneticSample(time: GPSTimestamp(seconds: 1_780_000_000), device: "i2c:test", chip: chip, field: field)
    }

    func testCalibrationAndDeclinationSwitchAsTheyChange() {
        let samples = PassthroughSubject<MagneticSample, Never>()
        let calibrations = CurrentValueSubject<ActiveCalibration?, Never>(nil)
        let fixes = PassthroughSubject<GPSFix, Never>()
        let declinations = CompassStages.declinations(fixes.eraseToAnyPublisher(), model: .wmm2025, fallback: Declination(1.5, .fallback))
        var out: [Attitude] = []
        let c = CompassStages.attitudes(samples.eraseToAnyPublisher(), calibrations: calibrations.eraseToAnyPublisher(),
                                        declinations: declinations, orientation: .identity)
            .sink { out.append($0) }
        defer { c.cancel() }
        samples.send(sample())
        XCTAssertEqual(out.last?.magStatus, "C")
        XCTAssertEqual(out.last?.declinationSource, .fallback)
        XCTAssertEqual(out.last?.heading ?? .nan, 1.5, accuracy: 1e-9)

        calibrations.send(ActiveCalibration(chip: "qmc5883l", correction: MagneticCalibration(offset: Vector3(0, -20, 0), matrix: .identity)))
        samples.send(sample())
        XCTAssertEqual(out.last?.magStatus, "N")
        XCTAssertEqual(out.last?.magneticHeading ?? .nan, 315, accuracy: 1e-9, "field (20, 20) after the offset: 45° west of north")
        samples.send(sample("hmc5883l"))
        XCTAssertEqual(out.last?.magStatus, "C", "a calibration for another chip is never applied")

        var fix = GPSFix(mode: .threeD, time: GPSTimestamp(seconds: 1_780_000_000), latitude: -33.9, longitude: 151.2)
        fix.altHAE = 0
        fixes.send(fix)
        samples.send(sample())
        XCTAssertEqual(out.last?.declinationSource, .fix)
        XCTAssertEqual(out.last?.declination ?? .nan, 12.8, accuracy: 0.1)
        XCTAssertEqual(out.count, 4)
    }
}
