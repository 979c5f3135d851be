import BearingAttitude
import BearingCompass
import BearingModel
import BearingCalibration
import XCTest

/// The compass stages: the calibration and declination in force when a sample arrives are the ones applied.
final class CompassStagesTests: XCTestCase {
    func sample(_ chip: String = "qmc5883l", _ field: Vector3 = Vector3(20, 0, 40)) -> MagneticSample {
        MagneticSample(time: GPSTimestamp(seconds: 1_780_000_000), device: "i2c:test", chip: chip, field: field)
    }

    func testCalibrationAndDeclinationSwitchAsTheyChange() {
        var declinations = WMMStage<Declination?>.declinations(model: .wmm2025, fallback: Declination(1.5, .fallback))
        var stage = MagnetometerStage(orientation: .identity, declination: declinations.current)
        var out: [Attitude] = []
        out.append(stage.attitude(sample()))
        XCTAssertEqual(out.last?.magStatus, "C")
        XCTAssertEqual(out.last?.declinationSource, .fallback)
        XCTAssertEqual(out.last?.heading ?? .nan, 1.5, accuracy: 1e-9)

        stage.calibration = ActiveCalibration(chip: "qmc5883l", correction: MagneticCalibration(offset: Vector3(0, -20, 0), matrix: .identity))
        out.append(stage.attitude(sample()))
        XCTAssertEqual(out.last?.magStatus, "N")
        XCTAssertEqual(out.last?.magneticHeading ?? .nan, 315, accuracy: 1e-9, "field (20, 20) after the offset: 45° west of north")
        out.append(stage.attitude(sample("hmc5883l")))
        XCTAssertEqual(out.last?.magStatus, "C", "a calibration for another chip is never applied")

        var fix = GPSFix(mode: .threeD, time: GPSTimestamp(seconds: 1_780_000_000), latitude: -33.9, longitude: 151.2)
        fix.altHAE = 0
        XCTAssertTrue(declinations.take(fix))
        XCTAssertFalse(declinations.take(fix), "the same place again: no change passed on")
        stage.declination = declinations.current
        out.append(stage.attitude(sample()))
        XCTAssertEqual(out.last?.declinationSource, .fix)
        XCTAssertEqual(out.last?.declination ?? .nan, 12.8, accuracy: 0.1)
        XCTAssertEqual(out.count, 4)
    }

    func testTheLocalFieldStartsWithTheFallbackAndChangesOnlyWhenTheFixMoves() throws {
        let fallback = LocalField.wmm(.wmm2025, latitude: 52.1, longitude: 4.3, heightKm: 0, year: 2026.5, source: .fallback)
        var fields = WMMStage<LocalField?>.localFields(model: .wmm2025, fallback: fallback)
        XCTAssertEqual(fields.current, fallback)
        var noFix = GPSFix(mode: .noFix, time: GPSTimestamp(seconds: 1_780_000_000))
        noFix.latitude = nil
        XCTAssertFalse(fields.take(noFix), "no fix: the fallback stays")
        var fix = GPSFix(mode: .threeD, time: GPSTimestamp(seconds: 1_780_000_000), latitude: -33.9, longitude: 151.2)
        fix.altHAE = 0
        XCTAssertTrue(fields.take(fix))
        let there = try XCTUnwrap(fields.current)
        XCTAssertEqual(there.declination.source, .fix)
        fix.latitude = -33.9001
        XCTAssertFalse(fields.take(fix), "11 m further: not recomputed")
        XCTAssertEqual(fields.current, there)
    }
}
