@testable import BearingModel
@testable import BearingAttitude
@testable import BearingWire
@testable import BearingCalibration
@testable import BearingMQTT
import Foundation
import XCTest

/// `String(printf:)` against Foundation's `String(format:)`, which it replaces, on the formats Bearing prints.
final class PrintfTests: XCTestCase {
    func check(_ format: String, _ mine: [any PrintfArgument], _ foundations: [CVarArg], file: StaticString = #filePath, line: UInt = #line) {
        let expected = String(format: format, arguments: foundations)
        XCTAssertEqual(Printf.format(format, mine), expected, "format \(format)", file: file, line: line)
    }

    func testNumbersMatchFoundation() {
        for v in [0.0, -0.0, 1.5, -2.25, 0.05, 0.15, 123456.789, 1e-7, 9.999, -1e300, .infinity, .nan] {
            for f in ["%.1f", "%.2f", "%.3f", "%+.2f", "%4.0f", "%08.5f", "%.4g", "%g", "%e", "%+.1f%%", "%4.1f s", "%.0f"] {
                check(f, [v], [v])
            }
        }
        for n in [0, 7, -7, 42, 255, 65535, Int(Int32.max), Int(Int32.min)] {
            for f in ["%d", "%02d", "%03d", "%4d", "%-4d|", "%+d"] { check(f, [n], [n]) }
        }
        // Foundation on Linux takes %d as 32 bits (Int.max printed "-1"); here an Int is printed whole.
        XCTAssertEqual(String(printf: "%d %d", Int.max, Int.min), "9223372036854775807 -9223372036854775808")
        for n: UInt8 in [0, 0x0d, 0xff] { check("%02X", [n], [n]) }
        check("%0\(3)d%08.5f", [51, 30.123456], [51, 30.123456])
        check("%02d,%02d,%03d,%02d", [1, 2, 3, 4], [1, 2, 3, 4])
    }

    func testTextMatchesFoundation() {
        check("pose %2d %@ held %4.1f s", [3, "+x", 2.25], [3, "+x" as NSString, 2.25])
        check("model %@ at %.4f", ["planar", 2025.5], ["planar" as NSString, 2025.5])
        check("read %@ %@: x %.3f µT%@ (%@)%@", ["lis3mdl", "0x1e", 1.5, "", "ok", "!"],
              ["lis3mdl" as NSString, "0x1e" as NSString, 1.5, "" as NSString, "ok" as NSString, "!" as NSString])
        // Foundation on Linux ignores a width or precision on %@ ("%-6@" printed "+x", unpadded, in the
        // accelerometer report's pose column); here they work as they do on %s.
        XCTAssertEqual(String(printf: "%6@|%-6@|%.2@|%-3@|", "ab", "cd", "xyz", "long"), "    ab|cd    |xy|long|")
        check("≈%.2f° 100%%", [1.005], [1.005])
    }

    func testLongOutputIsNotCut() {
        check("%.60f", [1.0 / 3.0], [1.0 / 3.0])
        check("%.0f", [1e300], [1e300])
    }
}
