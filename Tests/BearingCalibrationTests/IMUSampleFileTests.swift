@testable import BearingModel
@testable import BearingAttitude
@testable import BearingWire
@testable import BearingPublishing
@testable import BearingCalibration
import BearingSimulator
@testable import BearingMarine
@testable import BearingMQTT
import Foundation
import XCTest

/// Reading IMU recordings: columns by name, 6D files, and errors that say what is wrong and where.
final class IMUSampleFileTests: XCTestCase {
    /// A turning, still-starting board as CSV (header `header`, columns in its order), with the
    /// accelerometer and gyroscope scaled (to make files in the wrong units).
    func csv(header: [String] = IMUSampleFile.header.components(separatedBy: ","), seconds: Double = 20,
             accScale: Double = 1, gyroScale: Double = 1, magScale: Double = 1, lineEnding: String = "\n") -> String {
        var imu = VirtualIMU(heading: { t in t < 5 ? 0 : 40 * (t - 5) })
        imu.roll = { t in 10 * sin(t) }
        imu.gyroNoise = 0.003
        imu.accNoise = 0.05
        var text = header.joined(separator: ",") + lineEnding
        for r in imu.readings(duration: seconds) {
            let s = r.sample
            let m = (s.magnetometer ?? .zero) * magScale
            let values: [String: Double] = [
                "t": s.time, "acc_x": s.accelerometer.x * accScale, "acc_y": s.accelerometer.y * accScale, "acc_z": s.accelerometer.z * accScale,
                "gyr_x": s.gyroscope.x * gyroScale, "gyr_y": s.gyroscope.y * gyroScale, "gyr_z": s.gyroscope.z * gyroScale,
                "mag_x": m.x, "mag_y": m.y, "mag_z": m.z,
            ]
            text += header.map { values[$0].map { String(format: "%.6g", $0) } ?? "7" }.joined(separator: ",") + lineEnding
        }
        return text
    }

    func error(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> IMUSampleFileError? {
        do {
            _ = try IMUSampleFile.parse(text, source: "rec.csv")
            XCTFail("accepted", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    /// `text` with line `number` (1-based) replaced by what `change` makes of it.
    func editing(_ text: String, line number: Int, _ change: (String) -> String) -> String {
        var lines = text.components(separatedBy: "\n")
        lines[number - 1] = change(lines[number - 1])
        return lines.joined(separator: "\n")
    }

    func testColumnsAreFoundByNameInAnyOrder() throws {
        let standard = try IMUSampleFile.parse(csv(), source: "a.csv")
        XCTAssertTrue(standard.hasMagnetometer)
        XCTAssertEqual(standard.samples.count, 2001)
        let shuffled = ["gyr_z", "mag_y", "t", "acc_x", "note", "acc_z", "mag_x", "gyr_x", "acc_y", "mag_z", "gyr_y"]
        let other = try IMUSampleFile.parse("# recorded on the bench\n" + csv(header: shuffled, lineEnding: "\r\n"), source: "b.csv")
        XCTAssertEqual(other.samples, standard.samples)
        XCTAssertEqual(standard.samples[3].time, 0.03, accuracy: 1e-12)
    }

    /// A magnetometer slower than the IMU: rows with all three mag cells empty have no field sample; a row
    /// with only some of them empty is refused, naming the column.
    func testRowsWithoutAFieldSampleLeaveTheMagCellsEmpty() throws {
        var lines = csv().components(separatedBy: "\n")
        for i in 1..<lines.count where !lines[i].isEmpty && i % 4 != 1 {
            var f = lines[i].components(separatedBy: ",")
            for k in 7...9 { f[k] = "" }
            lines[i] = f.joined(separator: ",")
        }
        let thinned = try IMUSampleFile.parse(lines.joined(separator: "\n"), source: "slow-mag.csv")
        let full = try IMUSampleFile.parse(csv(), source: "a.csv")
        XCTAssertTrue(thinned.hasMagnetometer)
        XCTAssertEqual(thinned.samples.count, full.samples.count)
        XCTAssertEqual(thinned.samples.filter { $0.magnetometer != nil }.count, (full.samples.count + 3) / 4)
        XCTAssertEqual(thinned.samples[4].magnetometer, full.samples[4].magnetometer)
        XCTAssertNil(thinned.samples[5].magnetometer)
        XCTAssertEqual(thinned.samples[5].accelerometer, full.samples[5].accelerometer)
        var partial = lines
        var f = partial[3].components(separatedBy: ",")
        f[7] = "12.5"
        partial[3] = f.joined(separator: ",")
        let e = error(partial.joined(separator: "\n"))
        XCTAssertEqual(e?.line, 4)
        XCTAssertEqual(e?.column, "mag_y")
        XCTAssertEqual(e?.problem, "is empty")
    }

    func testWithoutMagColumnsTheFileIs6D() throws {
        let file = try IMUSampleFile.parse(csv(header: ["t", "acc_x", "acc_y", "acc_z", "gyr_x", "gyr_y", "gyr_z"]), source: "six.csv")
        XCTAssertFalse(file.hasMagnetometer)
        XCTAssertNil(file.samples[0].magnetometer)
        let e = error(csv(header: ["t", "acc_x", "acc_y", "acc_z", "gyr_x", "gyr_y", "gyr_z", "mag_x", "mag_z"]))
        XCTAssertEqual(e?.line, 1)
        XCTAssertEqual(e?.column, "mag_y")
        XCTAssertTrue(e?.description.hasPrefix("rec.csv line 1, column mag_y: missing from the header") ?? false, e?.description ?? "")
    }

    func testErrorsNameTheLineAndColumn() {
        let good = csv()
        let notANumber = error(editing(good, line: 4) { l in
            var f = l.components(separatedBy: ","); f[5] = "0.0x1"; return f.joined(separator: ",")
        })
        XCTAssertEqual(notANumber?.line, 4)
        XCTAssertEqual(notANumber?.column, "gyr_y")
        XCTAssertEqual(notANumber?.description, "rec.csv line 4, column gyr_y: \"0.0x1\" is not a finite number")

        let empty = error(editing(good, line: 9) { l in
            var f = l.components(separatedBy: ","); f[8] = ""; return f.joined(separator: ",")
        })
        XCTAssertEqual(empty?.description, "rec.csv line 9, column mag_y: is empty")

        let short = error(editing(good, line: 7) { l in l.components(separatedBy: ",").dropLast().joined(separator: ",") })
        XCTAssertEqual(short?.line, 7)
        XCTAssertTrue(short?.problem.hasPrefix("9 columns, the header names 10") ?? false, short?.description ?? "")

        let backwards = error(editing(good, line: 12) { l in "0.05" + l.drop { $0 != "," } })  // line 11 is t = 0.09
        XCTAssertEqual(backwards?.line, 12)
        XCTAssertEqual(backwards?.column, "t")
        XCTAssertTrue(backwards?.problem.contains("time 0.05 is not after line 11's 0.09") ?? false, backwards?.description ?? "")

        let repeated = error(editing(good, line: 12) { l in "0.09" + l.drop { $0 != "," } })
        XCTAssertEqual(repeated?.line, 12, "a repeated time is not monotonic either")

        let noHeader = error(good.components(separatedBy: "\n").dropFirst().joined(separator: "\n"))
        XCTAssertEqual(noHeader?.line, 1)
        XCTAssertTrue(noHeader?.problem.contains("numbers where the header should be") ?? false, noHeader?.description ?? "")

        XCTAssertEqual(error("")?.description.contains("empty"), true)
        XCTAssertEqual(error(IMUSampleFile.header + "\n")?.description, "rec.csv: a header and no samples")
        XCTAssertEqual(error("t,acc_x,acc_x\n")?.column, "acc_x", "named twice")
    }

    /// A line written twice to the byte (a logger's retry) is taken once and named; a repeated time with other values
    /// is still refused (`testErrorsNameTheLineAndColumn`).
    func testALineWrittenTwiceIsTakenOnce() throws {
        let good = csv()
        var lines = good.components(separatedBy: "\n")
        lines.insert(lines[5], at: 6)
        lines.insert(lines[20], at: 21)
        let file = try IMUSampleFile.parse(lines.joined(separator: "\n"), source: "rec.csv")
        let original = try IMUSampleFile.parse(good, source: "rec.csv")
        XCTAssertEqual(file.repeatedLines, [7, 22])
        XCTAssertEqual(file.samples.map(\.time), original.samples.map(\.time))
        XCTAssertEqual(original.repeatedLines, [])
        let spaced = editing(lines.joined(separator: "\n"), line: 7) { $0 + " " }
        XCTAssertEqual(try IMUSampleFile.parse(spaced, source: "rec.csv").repeatedLines, [7, 22], "white space at the end is no other line")
        let other = editing(lines.joined(separator: "\n"), line: 7) { l in l.replacingOccurrences(of: ",", with: ", ") }
        XCTAssertEqual(error(other)?.line, 7, "the same values written otherwise are a time that does not advance")
    }

    func testWrongUnitsAreNamed() {
        let inG = error(csv(accScale: 1 / 9.80665))
        XCTAssertEqual(inG?.column, "acc_x,acc_y,acc_z")
        XCTAssertNil(inG?.line)
        XCTAssertTrue(inG?.problem.contains("looks like it is in g;") ?? false, inG?.description ?? "")
        let inMilliG = error(csv(accScale: 1000 / 9.80665))
        XCTAssertTrue(inMilliG?.problem.contains("in mg") ?? false, inMilliG?.description ?? "")
        let odd = error(csv(accScale: 0.3))
        XCTAssertTrue(odd?.problem.contains("expected about 9.8") ?? false, odd?.description ?? "")
        let inDegrees = error(csv(gyroScale: 180 / .pi))
        XCTAssertEqual(inDegrees?.column, "gyr_x,gyr_y,gyr_z")
        XCTAssertTrue(inDegrees?.problem.contains("looks like it is in °/s") ?? false, inDegrees?.description ?? "")
    }

    /// The filter takes the magnetometer in any unit, online calibration only in µT: gauss and nT are named.
    func testAMagnetometerNotInMicroteslaIsNamed() throws {
        XCTAssertNil(try IMUSampleFile.parse(csv(), source: "rec.csv").magnetometerUnitProblem(source: "rec.csv"))
        let gauss = try IMUSampleFile.parse(csv(magScale: 0.01), source: "rec.csv").magnetometerUnitProblem(source: "rec.csv")
        XCTAssertEqual(gauss?.column, "mag_x,mag_y,mag_z")
        XCTAssertTrue(gauss?.problem.contains("looks like it is in gauss; give µT (multiply by 100)") ?? false, gauss?.description ?? "")
        let nanotesla = try IMUSampleFile.parse(csv(magScale: 1000), source: "rec.csv").magnetometerUnitProblem(source: "rec.csv")
        XCTAssertTrue(nanotesla?.problem.contains("in nT; give µT (multiply by 0.001)") ?? false, nanotesla?.description ?? "")
        XCTAssertNil(try IMUSampleFile.parse(csv(magScale: 4), source: "rec.csv").magnetometerUnitProblem(source: "rec.csv"),
                     "four times the field: µT behind a large hard iron, or mG; not judged")
    }

    /// Real fast translations reach about 10 g: single rows are never judged, only the file's median.
    func testAFewViolentRowsAreNotAUnitsError() throws {
        var text = csv()
        for line in [50, 51, 52, 400] {
            text = editing(text, line: line) { l in
                var f = l.components(separatedBy: ","); f[1] = "95"; f[4] = "30"; return f.joined(separator: ",")
            }
        }
        XCTAssertNoThrow(try IMUSampleFile.parse(text, source: "shaken.csv"))
    }
}

/// Accelerometer-only recordings and Bearing's own recording header.
final class IMUSampleFileOptionalColumnsTests: XCTestCase {
    func testGyroscopeColumnsMayBeLeftOutWhenAllowed() throws {
        var text = "# bearing-samples chip=lsm303agr device=i2c:/dev/i2c-1:0x19\nt,acc_x,acc_y,acc_z\n"
        for k in 0..<50 { text += "\(Double(k) / 100),0.1,-0.2,9.79\n" }
        XCTAssertThrowsError(try IMUSampleFile.parse(text, source: "acc.csv")) {
            XCTAssertTrue("\($0)".contains("column gyr_x: missing from the header"), "\($0)")
        }
        let f = try IMUSampleFile.parse(text, source: "acc.csv", requireGyroscope: false)
        XCTAssertFalse(f.hasGyroscope)
        XCTAssertFalse(f.hasMagnetometer)
        XCTAssertEqual(f.samples.count, 50)
        XCTAssertEqual(f.samples[3].accelerometer, Vector3(0.1, -0.2, 9.79))
        XCTAssertEqual(f.samples[3].gyroscope, .zero)
        XCTAssertEqual(f.metadata, ["chip": "lsm303agr", "device": "i2c:/dev/i2c-1:0x19"])
        // With mag columns but no gyroscope, the mag columns are read.
        let nine = try IMUSampleFile.parse("t,mag_x,acc_x,acc_y,acc_z,mag_y,mag_z\n0,1,0,0,9.8,2,3\n0.01,1,0,0,9.8,2,3\n", source: "m.csv",
                                           requireGyroscope: false)
        XCTAssertEqual(nine.samples[0].magnetometer, Vector3(1, 2, 3))
        XCTAssertEqual(nine.samples[0].accelerometer, Vector3(0, 0, 9.8))
        // Half a gyroscope is an error, named.
        XCTAssertThrowsError(try IMUSampleFile.parse("t,acc_x,acc_y,acc_z,gyr_x\n0,0,0,9.8,0\n", source: "h.csv", requireGyroscope: false)) {
            XCTAssertEqual("\($0)", "h.csv line 1, column gyr_y: missing from the header (t,acc_x,acc_y,acc_z,gyr_x); expected a header such as \(IMUSampleFile.header) (the gyr and mag columns are optional)")
        }
    }
}
