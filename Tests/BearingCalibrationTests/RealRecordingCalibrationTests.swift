@testable import BearingModel
@testable import BearingAttitude
@testable import BearingWire
@testable import BearingPublishing
@testable import BearingCalibration
@testable import BearingMarine
@testable import BearingMQTT
import BearingDaemon
import Foundation
import XCTest

/// Real magnetometer recordings (../shared/data/mag, see its README) against the calibrations their
/// authors published. Skipped, visibly, without ../shared.
final class RealRecordingCalibrationTests: XCTestCase {
    func magDirectory() throws -> URL {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let env = ProcessInfo.processInfo.environment["BEARING_SHARED_DATA"].map { URL(fileURLWithPath: $0) }
        let url = (env ?? root.deletingLastPathComponent().appendingPathComponent("shared/data")).appendingPathComponent("mag")
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw XCTSkip("SKIPPED: \(url.path) absent; real-recording calibration comparisons not run")
        }
        return url
    }

    func report(_ name: String, _ fit: CalibrationFit, _ raw: [Vector3], published: Vector3?, radius: Double) -> (offsetError: Double, spread: Double) {
        let mags = raw.map { fit.calibration.apply($0).length }
        let mean = mags.reduce(0, +) / Double(mags.count)
        let spread = (mags.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(mags.count)).squareRoot() / mean * 100
        let o = fit.calibration.offset
        let offsetError = published.map { (o - $0).length / radius * 100 } ?? .nan
        let f = fit.figures
        print(String(format: "%@: %d samples, %d used, %d outliers, model %@; offset (%.4g, %.4g, %.4g)", name, fit.samples, fit.used,
                     fit.outliers, fit.model.rawValue, o.x, o.y, o.z)
              + (published.map { String(format: " vs published (%.4g, %.4g, %.4g): %.3f%% of the radius %.4g", $0.x, $0.y, $0.z, offsetError, radius) } ?? "")
              + String(format: "; calibrated |B| spread %.2f%% (std/mean, all samples); gaps %.1f, variance %.2f%%, wobble %.2f%%, fit error %.2f%%, heading error %.2f°",
                       spread, f.gaps, f.variance, f.wobble, f.fitError, f.headingError))
        return (offsetError, spread)
    }

    func testQMC5883LRecordingAgreesWithThePublishedCalibration() throws {
        let url = try magDirectory().appendingPathComponent("qmc5883l_filtered_raw_data.csv")
        let file = try SampleFile.parse(String(contentsOf: url, encoding: .utf8), source: url.lastPathComponent)
        XCTAssertEqual(file.columnNames, ["mx", "my", "mz"])
        XCTAssertEqual(file.samples.count, 22745)
        // Published: calibrated = A·raw + b (unit field) ⇒ offset = −A⁻¹·b, matrix ∝ A.
        let numbers = try String(contentsOf: try magDirectory().appendingPathComponent("qmc5883l_params_from_filtered_9590433.csv"), encoding: .utf8)
            .split(whereSeparator: \.isNewline).compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        XCTAssertEqual(numbers.count, 12)
        let a = Matrix3(Array(numbers[0..<3]), Array(numbers[3..<6]), Array(numbers[6..<9]))
        let b = Vector3(numbers[9], numbers[10], numbers[11])
        let published = -(a.inverse! * b)
        let fit = try MagnetometerCalibrator().fit(file.samples)
        XCTAssertEqual(fit.model, .ellipsoid)
        let (offsetError, spread) = report("qmc5883l", fit, file.samples, published: published, radius: fit.field)
        XCTAssertLessThan(offsetError, 1, "hard-iron offset within 1% of the field radius")
        XCTAssertLessThan(spread, 3)
        // The soft-iron shape agrees too. Their A is a general matrix, ours symmetric: the two can differ
        // by a rotation, so compare MᵀM (the ellipsoid's shape), both scaled to unit determinant.
        let ours = fit.calibration.matrix.transposed * fit.calibration.matrix
        let theirs = a.transposed * a
        let difference = (ours * (1 / cbrt(ours.determinant))).maxDifference(theirs * (1 / cbrt(theirs.determinant)))
        print(String(format: "qmc5883l: ellipsoid shapes MᵀM (unit determinant) differ by at most %.4f", difference))
        XCTAssertLessThan(difference, 0.05)
    }

    func testSAP6StoredCalibrationCentreIsRecoveredFrom24Shots() throws {
        let url = try magDirectory().appendingPathComponent("sap6_BB.json")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        let mag = (json["mag"] as! [[Double]]).map { Vector3($0[0], $0[1], $0[2]) }
        XCTAssertEqual(mag.count, 24)
        // The device stored centre [-1.19063, 0.698248, -7.08568] in its "+X+Y-Z" axes: raw z is +7.08568.
        let published = Vector3(-1.19063, 0.698248, 7.08568)
        let fit = try MagnetometerCalibrator(options: .init(field: 43.3819)).fit(mag)
        let (offsetError, spread) = report("sap6", fit, mag, published: published, radius: 43.3819)
        XCTAssertLessThan(offsetError, 1)
        XCTAssertLessThan(spread, 1)
        XCTAssertGreaterThan(fit.figures.gaps, 15, "24 shots cannot fill 100 regions: the figures say so")
    }

    func testCKExplorerFullSphereRecordingCalibratesToAConstantMagnitude() throws {
        let url = try magDirectory().appendingPathComponent("ckexplorer_acc_mag_log.csv")
        let text = try String(contentsOf: url, encoding: .utf8)
        let file = try SampleFile.parse(text, source: url.lastPathComponent)
        XCTAssertEqual(file.columns, [4, 5, 6], "picked mx,my,mz from the header")
        let byNumber = try SampleFile.parse(text, source: url.lastPathComponent, columns: .numbers([4, 5, 6]))
        XCTAssertEqual(byNumber.samples, file.samples)
        let fit = try MagnetometerCalibrator().fit(file.samples)
        let (_, spread) = report("ckexplorer", fit, file.samples, published: nil, radius: fit.field)
        XCTAssertEqual(fit.model, .ellipsoid)
        XCTAssertLessThan(spread, 3)
        XCTAssertLessThan(fit.figures.fitError, CalibrationFigures.maximumFitError)
    }
}
