import BearingCalibration
import BearingModel
import BearingSimulator
import Foundation
import DaemonTestRig
import TestSupport
import XCTest

/// `bearing swing --log FILE` as a user runs it on a data log: a boat swung twice in a 1 kn cross current with
/// a known deviation curve, its ATT at 10 Hz (compass heading, rate of turn, variation) and TPV at 1 Hz as the
/// daemon writes them. The curve and the current come out, the deviation file is written on --yes; half a swing
/// is refused naming what is missing, and nothing is written.
final class SwingCommandTests: XCTestCase {
    static let truth = DeviationCurve(coefficients: [-2.0, 3.0, -1.5, 0.8, -0.6])
    static let variation = -1.2
    var directory: URL!

    override func setUp() { directory = temporaryDirectory("swing") }
    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    /// `seconds` of a turn at 2 °/s at 2.572 m/s through the water, current 0.514 m/s east; the compass reads
    /// the true heading less the variation and the deviation, with ±0.5° of noise; the gyroscope's rate has a
    /// 0.01 °/s bias. Lines in arrival order, as the data log keeps them, with some that are not ATT or TPV.
    func writeLog(seconds: Int, deviationApplied: Bool = false) throws -> String {
        var random = SplitMix64(seed: 5)
        // Lines the swing passes over: not JSON, another class, a GNSS compass's ATT relayed from gpsd.
        var lines = [#"{"class":"VERSION","release":"bearing"}"#, "not json at all",
                     #"{"class":"ATT","device":"/dev/ttyUSB0","time":"2026-11-16T00:00:00.000Z","heading":10.0,"mheading":11.0,"rot":600.0}"#]
        let start = 1_795_000_000.0
        for k in 0..<(seconds * 10) {
            let t = Double(k) / 10
            let trueHeading = 40 + 2 * t
            var compass = trueHeading - Self.variation
            for _ in 0..<20 { compass = trueHeading - Self.variation - Self.truth.deviation(atCompassHeading: compass) }
            compass = AttitudeAngles.normalizedDegrees(compass + random.uniform(-0.5, 0.5))
            let deviation = deviationApplied ? 1.0 : 0
            let mheading = AttitudeAngles.normalizedDegrees(compass + deviation)
            let time = GPSTimestamp(unixTime: start + t).iso8601
            lines.append(String(format: #"{"class":"ATT","device":"i2c:/dev/i2c-1:0x0d","time":"%@","heading":%.2f,"mheading":%.2f,%@"rot":%.2f}"#,
                                time, AttitudeAngles.normalizedDegrees(mheading + Self.variation), mheading,
                                deviationApplied ? #""deviation":1.00,"# : "", (2 + 0.01) * 60))
            if k % 10 == 5 {
                let r = trueHeading * .pi / 180
                let ve: Double = 2.572 * sin(r) + 0.514 + random.uniform(-0.05, 0.05)
                let vn: Double = 2.572 * cos(r) + random.uniform(-0.05, 0.05)
                lines.append(String(format: #"{"class":"TPV","device":"/dev/ttyS0","mode":3,"time":"%@","lat":50.8,"lon":-1.3,"track":%.1f,"speed":%.3f,"eph":2.5,"eps":0.1}"#,
                                    time, AttitudeAngles.normalizedDegrees(atan2(ve, vn) * 180 / .pi), (ve * ve + vn * vn).squareRoot()))
            }
        }
        let url = directory.appendingPathComponent("data.ndjson")
        try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    func testASwingFromTheDataLogGivesTheCurveAndTheCurrentAndKeepsIt() throws {
        for applied in [false, true] {
            let log = try writeLog(seconds: 380, deviationApplied: applied)
            let output = directory.appendingPathComponent("deviation.json").path
            try? FileManager.default.removeItem(atPath: output)
            let (status, out, err) = try runBearing(["swing", "--board", "simulator", "--log", log, "--yes", "--output", output])
            XCTAssertEqual(status, 0, err + out)
            print("bearing swing --log (deviation \(applied ? "already applied" : "none") in the log):\n\(out)")
            XCTAssertTrue(out.contains("current 0.5"), out)
            let record = try DeviationRecord.decode(try Data(contentsOf: URL(fileURLWithPath: output)), source: output)
            let curve = try record.curve()
            let error = (0..<360).map { abs(curve.deviation(atCompassHeading: Double($0)) - Self.truth.deviation(atCompassHeading: Double($0))) }.max()!
            XCTAssertLessThanOrEqual(error, 0.3, "curve \(curve.coefficients)")
            XCTAssertEqual(record.source, "swing")
            XCTAssertEqual(try XCTUnwrap(record.current)[0], 0.514, accuracy: 0.1)
            XCTAssertEqual(try XCTUnwrap(record.current)[1], 0, accuracy: 0.1)
            XCTAssertEqual(record.uncertainties?.count, 5)
        }
    }

    func testHalfASwingIsRefusedAndNothingIsWritten() throws {
        let log = try writeLog(seconds: 90)
        let output = directory.appendingPathComponent("deviation.json").path
        let (status, _, err) = try runBearing(["swing", "--board", "simulator", "--log", log, "--yes", "--output", output])
        XCTAssertEqual(status, 2, err)
        XCTAssertTrue(err.contains("sector") && err.contains("the deviation curve in force is unchanged"), err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }

    func testWithoutATerminalTheCurveIsShownButNotApplied() throws {
        let log = try writeLog(seconds: 380)
        let output = directory.appendingPathComponent("deviation.json").path
        let (status, out, err) = try runBearing(["swing", "--board", "simulator", "--log", log, "--output", output])
        XCTAssertEqual(status, 0, err)
        XCTAssertTrue(out.contains("deviation curve") && out.contains("not applied (no terminal to ask on: give --yes)"), out)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }
}
