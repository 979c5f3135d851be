import BearingModel
import BearingDaemon
import Foundation
import TestSupport
import XCTest

/// The NDJSON data log on a real file: whole lines only, repair of a cut-short last line, reopen.
final class DataLogTests: XCTestCase {
    func testAppendsWholeLinesAndRepairsACutShortFile() throws {
        let dir = temporaryDirectory("datalog")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("data.ndjson").path
        // A previous writer lost power mid-line.
        try #"{"class":"TPV","mode":3}"#.appending("\n{\"class\":\"TP").write(toFile: path, atomically: true, encoding: .utf8)
        let log = try DataLog(path: path, logger: testLogger())
        for i in 0..<100 { log.append(#"{"class":"SKY","seq":\#(i)}"#) }
        log.flush()
        try FileManager.default.moveItem(atPath: path, toPath: path + ".1")   // logrotate
        log.reopen()
        log.append(#"{"class":"TPV","after":"rotation"}"#)
        log.close()

        let old = try String(contentsOfFile: path + ".1", encoding: .utf8).split(separator: "\n").map(String.init)
        XCTAssertEqual(old.count, 102)
        XCTAssertEqual(old[1], #"{"class":"TP"#, "the torn line stays on its own, never glued to a new record")
        XCTAssertEqual(old[2], #"{"class":"SKY","seq":0}"#)
        XCTAssertEqual(old.last, #"{"class":"SKY","seq":99}"#)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "{\"class\":\"TPV\",\"after\":\"rotation\"}\n")
    }

    func testUnwritablePathIsAClearError() {
        XCTAssertThrowsError(try DataLog(path: "/nonexistent-dir/data.ndjson", logger: testLogger())) {
            XCTAssertTrue("\($0)".contains("open(/nonexistent-dir/data.ndjson)"), "\($0)")
        }
    }
}
