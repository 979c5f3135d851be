@testable import BearingModel
@testable import BearingAttitude
@testable import BearingWire
@testable import BearingPublishing
@testable import BearingCalibration
import BearingPOSIX
import BearingSensors
@testable import BearingMarine
@testable import BearingMQTT
import BearingDaemon
import Foundation
import XCTest

/// Sample files in (CSV, whitespace, headers, column choice) and calibration files out and back in.
final class CalibrationFileTests: XCTestCase {
    func testCSVWithHeaderLinesAndCRLF() throws {
        let f = try SampleFile.parse("Fs,50.00\r\nInitialization time,60\r\nmx,my,mz\r\n1,2,3\r\n4,5,6\r\n", source: "q.csv")
        XCTAssertEqual(f.samples, [Vector3(1, 2, 3), Vector3(4, 5, 6)])
        XCTAssertEqual(f.columnNames, ["mx", "my", "mz"])
    }

    func testWhitespaceSeparatedWithoutHeader() throws {
        let f = try SampleFile.parse("  1.5\t-2 3e1\n\n4 5 6\n", source: "w.txt")
        XCTAssertEqual(f.samples, [Vector3(1.5, -2, 30), Vector3(4, 5, 6)])
        XCTAssertNil(f.columnNames)
    }

    func testColumnsByNumberAndByName() throws {
        let text = "t,ax,ay,az,mx,my,mz\n0,1,1,1,10,20,30\n1,1,1,1,11,21,31\n"
        XCTAssertEqual(try SampleFile.parse(text, source: "a.csv").samples.first, Vector3(10, 20, 30))
        XCTAssertEqual(try SampleFile.parse(text, source: "a.csv", columns: .numbers([2, 3, 4])).samples.first, Vector3(1, 1, 1))
        XCTAssertEqual(try SampleFile.parse(text, source: "a.csv", columns: SampleFile.ColumnSelection(parsing: "mz,my,mx")).samples.first,
                       Vector3(30, 20, 10))
        XCTAssertThrowsError(try SampleFile.parse(text, source: "a.csv", columns: .names(["bx", "by", "bz"]))) {
            XCTAssertEqual("\($0)", "a.csv: no column named \"bx\"; the header has t, ax, ay, az, mx, my, mz")
        }
        XCTAssertThrowsError(try SampleFile.parse(text, source: "a.csv", columns: .numbers([5, 6, 9]))) {
            XCTAssertTrue("\($0)".contains("column 9, the data have 7"), "\($0)")
        }
    }

    func testWideFilesWithoutAHeaderAskForColumns() {
        XCTAssertThrowsError(try SampleFile.parse("1 2 3 4 5 6\n", source: "wide.txt")) {
            XCTAssertEqual("\($0)", "wide.txt line 1: 6 columns and no x,y,z or mx,my,mz header; pick three with --columns, e.g. --columns 4,5,6")
        }
    }

    func testBadColumnsOptions() {
        for (text, expected) in [("1,2", "give three columns"), ("0,1,2", "count from 1"), ("1,1,2", "appears twice")] {
            XCTAssertThrowsError(try SampleFile.ColumnSelection(parsing: text)) { XCTAssertTrue("\($0)".contains(expected), "\($0)") }
        }
    }

    func testAFewBadLinesAreSkippedAndNamedTooManyAreAnError() throws {
        var text = "x,y,z\n"
        for i in 0..<100 { text += "\(i),\(i),\(i)\n" }
        text += "7,oops,8\n"
        let f = try SampleFile.parse(text, source: "s.csv")
        XCTAssertEqual(f.samples.count, 100)
        XCTAssertEqual(f.skipped, 1)
        XCTAssertEqual(f.skippedExamples, ["s.csv line 102: column 2 \"oops\" is not a number"])
        XCTAssertThrowsError(try SampleFile.parse("1,2,3\n1,2\n1,x,3\n", source: "bad.csv")) {
            XCTAssertTrue("\($0)".hasPrefix("bad.csv: 2 of 3 data lines unreadable; first: bad.csv line 2: has 2 columns"), "\($0)")
        }
        XCTAssertThrowsError(try SampleFile.parse("just words\n", source: "e.txt")) { XCTAssertTrue("\($0)".contains("no samples found")) }
    }

    func testBearingRecordingHeaderKeepsChipAndUnits() throws {
        let f = try SampleFile.parse("# bearing-samples chip=qmc5883l device=i2c:/dev/i2c-1:0x0d units=uT\ntime,x,y,z\n1.5,1,2,3\n", source: "r.csv")
        XCTAssertEqual(f.metadata, ["chip": "qmc5883l", "device": "i2c:/dev/i2c-1:0x0d", "units": "uT"])
        XCTAssertEqual(f.samples, [Vector3(1, 2, 3)])
    }

    func record() -> CalibrationRecord {
        let fit = CalibrationFit(
            calibration: MagneticCalibration(offset: Vector3(1, -2, 3), matrix: Matrix3([1.1, 0.01, 0], [0.01, 0.9, 0], [0, 0, 1])),
            model: .ellipsoid, field: 48.5,
            figures: CalibrationFigures(gaps: 3, variance: 1, wobble: 0.5, fitError: 1, headingError: 0.2, regionsCovered: 97),
            samples: 900, used: 880, outliers: 3, radii: [40, 45, 50], regionCounts: [], warnings: [])
        return CalibrationRecord(fit: fit, chip: "qmc5883l", device: "i2c:/dev/i2c-1:0x0d", units: "uT", fieldSource: "wmm",
                                 position: [52.1, 4.3, 0], time: GPSTimestamp(unixTime: 1_795_000_000))
    }

    func testCalibrationFileRoundTrips() throws {
        let r = record()
        let data = r.encoded()
        let text = String(decoding: data, as: UTF8.self)
        XCTAssertTrue(text.contains("\"fit_error\" : 1"), text)
        XCTAssertTrue(text.hasSuffix("}\n"))
        let back = try CalibrationRecord.decode(data, source: "c.json")
        XCTAssertEqual(back, r)
        XCTAssertEqual(try back.calibration().offset, Vector3(1, -2, 3))
    }

    /// A LIS2MDL file from before the driver made its left-handed axes right-handed (no `axes`) still
    /// corrects today's samples: the same field, read with Z negated, comes out with Z negated.
    func testAnOldLIS2MDLFileIsTurnedIntoTheRightHandedAxes() throws {
        var object = try JSONSerialization.jsonObject(with: record().encoded()) as! [String: Any]
        XCTAssertEqual(object["axes"] as? String, "right-handed", "new files say which axes they were fitted in")
        object["chip"] = "lis2mdl"
        object["axes"] = nil
        let old = try CalibrationRecord.decode(try JSONSerialization.data(withJSONObject: object), source: "old.json")
        let converted = try old.calibration()
        let fittedThen = MagneticCalibration(offset: Vector3(1, -2, 3), matrix: Matrix3([1.1, 0.01, 0], [0.01, 0.9, 0], [0, 0, 1]))
        for raw in [Vector3(20, -5, 40), Vector3(-3, 17, -44)] {
            let then = fittedThen.apply(raw)
            let now = converted.apply(Vector3(raw.x, raw.y, -raw.z))
            XCTAssertEqual(now.x, then.x, accuracy: 1e-12)
            XCTAssertEqual(now.y, then.y, accuracy: 1e-12)
            XCTAssertEqual(now.z, -then.z, accuracy: 1e-12)
        }
        // Another chip's file without `axes` is taken as it is; an unknown frame is refused.
        object["chip"] = "qmc5883l"
        XCTAssertEqual(try CalibrationRecord.decode(try JSONSerialization.data(withJSONObject: object), source: "q.json").calibration(), fittedThen)
        object["axes"] = "left-handed"
        XCTAssertThrowsError(try CalibrationRecord.decode(try JSONSerialization.data(withJSONObject: object), source: "l.json")) {
            XCTAssertTrue("\($0)".contains("\"axes\" is \"left-handed\""), "\($0)")
        }
    }

    func testBadCalibrationFilesAreRejectedWithTheReason() {
        func reject(_ mutate: (inout [String: Any]) -> Void, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
            var object = try! JSONSerialization.jsonObject(with: record().encoded()) as! [String: Any]
            mutate(&object)
            let data = try! JSONSerialization.data(withJSONObject: object)
            XCTAssertThrowsError(try CalibrationRecord.decode(data, source: "c.json"), file: file, line: line) {
                XCTAssertTrue("\($0)".contains(expected), "\($0)", file: file, line: line)
            }
        }
        reject({ $0["offset"] = [1, 2] }, "\"offset\" must be three finite numbers")
        reject({ $0["matrix"] = [[1, 0, 0], [0, 1, 0], [0, 0, -1]] }, "determinant -1")
        reject({ $0["matrix"] = [[100, 0, 0], [0, 1, 0], [0, 0, 1]] }, "more than 20 times")
        reject({ $0.removeValue(forKey: "chip") }, "missing \"chip\"")
        reject({ $0["field"] = -3 }, "\"field\" must be a positive number")
        reject({ $0["format"] = "other/9" }, "format \"other/9\"")
        reject({ $0["figures"] = ["gaps": "many"] }, "\"figures.gaps\" has the wrong type")
        XCTAssertThrowsError(try CalibrationRecord.decode(Data("{\"format\":".utf8), source: "c.json")) {
            XCTAssertEqual("\($0)", "c.json: not a calibration file: invalid JSON")
        }
        XCTAssertThrowsError(try CalibrationRecord.decode(Data(), source: "c.json"))
    }
}

/// The hints and the coverage map shown while collecting.
final class CalibrationGuideTests: XCTestCase {
    /// Counts with every region full except those whose centre (board frame) is near `missing`.
    func counts(missing: Vector3, orientation: Orientation = .identity) -> [Int] {
        (0..<SphereRegions.count).map { r in
            orientation.toBoard(SphereRegions.center(of: r)).dot(missing.normalized) > 0.7 ? 0 : 5
        }
    }

    func testHintsPointAtTheMissingSide() {
        XCTAssertTrue(CalibrationGuide.hint(regionCounts: counts(missing: Vector3(1, 0, 0))).hasPrefix("tilt the nose down"))
        XCTAssertTrue(CalibrationGuide.hint(regionCounts: counts(missing: Vector3(-1, 0, 0))).hasPrefix("tilt the nose up"))
        XCTAssertTrue(CalibrationGuide.hint(regionCounts: counts(missing: Vector3(0, -1, 0))).hasPrefix("roll it onto its left side"))
        XCTAssertTrue(CalibrationGuide.hint(regionCounts: counts(missing: Vector3(0, 1, 0))).hasPrefix("roll it onto its right side"))
        XCTAssertTrue(CalibrationGuide.hint(regionCounts: counts(missing: Vector3(0, 0, -1))).hasPrefix("turn it upside down"))
        // In the southern hemisphere the field points up: the opposite side must face down.
        XCTAssertTrue(CalibrationGuide.hint(regionCounts: counts(missing: Vector3(1, 0, 0)), southernHemisphere: true).hasPrefix("tilt the nose up"))
        XCTAssertTrue(CalibrationGuide.hint(regionCounts: Array(repeating: 3, count: 100)).hasPrefix("coverage complete"))
    }

    func testHintsAreInBoardAxes() throws {
        // Chip mounted upside down (+X-Y-Z): a gap at chip −z is board +z, "level, right way up".
        let o = try Orientation(axes: "+X-Y-Z")
        let chipGap = (0..<100).map { SphereRegions.center(of: $0).z < -0.7 ? 0 : 5 }
        XCTAssertTrue(CalibrationGuide.hint(regionCounts: chipGap, orientation: o).hasPrefix("hold it level, right way up"))
    }
}
