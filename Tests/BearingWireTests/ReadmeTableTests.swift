import BearingModel
import BearingWire
import TestSupport
import XCTest

/// The README's operator table is the operator table: written from it, checked here.
final class ReadmeTableTests: XCTestCase {
    func testREADMEOperatorTableIsTheCodes() throws {
        let readme = try String(contentsOf: repoRoot.appendingPathComponent("docs/operators.md"), encoding: .utf8)
        let begin = "<!-- operator-table: generated from OperatorSpec.table -->\n", end = "\n<!-- end operator-table -->"
        let start = try XCTUnwrap(readme.range(of: begin), "docs/operators.md lacks the operator-table markers")
        let stop = try XCTUnwrap(readme.range(of: end, range: start.upperBound..<readme.endIndex))
        XCTAssertEqual(String(readme[start.upperBound..<stop.lowerBound]), OperatorSpec.markdownTable,
                       "regenerate the table in docs/operators.md from OperatorSpec.markdownTable")
    }
}
