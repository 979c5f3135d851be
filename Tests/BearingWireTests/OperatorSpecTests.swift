import BearingWire
import Foundation
import XCTest

final class OperatorSpecTests: XCTestCase {
    func testJSONRoundTrip() throws {
        let chain: [OperatorSpec] = [.minMode(.twoD), .maxError(meters: 25.5), .dedupe(.time), .throttle(interval: 0.5, latest: false)]
        let data = try JSONEncoder().encode(chain)
        XCTAssertEqual(try JSONDecoder().decode([OperatorSpec].self, from: data), chain)
    }

    func testDecodesTheDocumentedForm() throws {
        let json = #"[{"op":"min_mode","mode":3},{"op":"dedupe"},{"op":"throttle","interval":2}]"#
        XCTAssertEqual(try JSONDecoder().decode([OperatorSpec].self, from: Data(json.utf8)),
                       [.minMode(.threeD), .dedupe(.all), .throttle(interval: 2, latest: true)])
    }

    func assertRejects(_ json: String, mentioning words: [String], file: StaticString = #filePath, line: UInt = #line) {
        do {
            _ = try JSONDecoder().decode([OperatorSpec].self, from: Data(json.utf8))
            XCTFail("accepted \(json)", file: file, line: line)
        } catch let DecodingError.dataCorrupted(context) {
            for w in words {
                XCTAssertTrue(context.debugDescription.contains(w), "\(context.debugDescription) lacks \(w)", file: file, line: line)
            }
        } catch {
            XCTFail("unexpected \(error)", file: file, line: line)
        }
    }

    func testBadSpecsNameWhatIsWrong() {
        assertRejects(#"[{"op":"median"}]"#, mentioning: ["\"median\"", "allowed", "throttle", "smooth"])
        assertRejects(#"[{"op":"throttle","interval":-1}]"#, mentioning: ["interval", "-1", "> 0"])
        assertRejects(#"[{"op":"throttle","interval":"fast"}]"#, mentioning: ["interval", "expected a number"])
        assertRejects(#"[{"op":"min_mode","mode":4}]"#, mentioning: ["mode", "4", "allowed"])
        assertRejects(#"[{"op":"dedupe","key":"colour"}]"#, mentioning: ["colour", "all, time, position"])
        assertRejects(#"[{"op":"dedupe","every":2}]"#, mentioning: ["every", "unknown parameter"])
        assertRejects(#"[{"mode":2}]"#, mentioning: ["missing \"op\""])
    }
}
