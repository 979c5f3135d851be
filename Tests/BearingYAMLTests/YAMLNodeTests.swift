import BearingModel
import BearingYAML
import XCTest

/// The libyaml bridge: structure, lines, and the scalar rules Yams applied (which config files rely on).
final class YAMLNodeTests: XCTestCase {
    func testStructureOrderAndLines() throws {
        let root = try XCTUnwrap(YAMLNode.compose("# comment\nb: 1\na:\n  - x\n  - 'y'\nc: {k: v}\n"))
        guard case .mapping(let pairs, let mark) = root else { return XCTFail("not a mapping: \(root)") }
        XCTAssertEqual(mark.line, 2)
        XCTAssertEqual(pairs.map { $0.key.string }, ["b", "a", "c"], "keys in file order")
        XCTAssertEqual(pairs[1].key.mark, .init(line: 3, column: 1))
        guard case .sequence(let items, _) = pairs[1].value else { return XCTFail("a: not a list") }
        XCTAssertEqual(items.map(\.string), ["x", "y"])
        XCTAssertEqual(items[1].mark.line, 5)
        XCTAssertEqual(items[1].scalar?.style, .singleQuoted)
    }

    func testScalarRulesAreYAML11AsYamsReadThem() throws {
        func node(_ s: String) throws -> YAMLNode { try XCTUnwrap(YAMLNode.compose("v: \(s)")).pairs[0].value }
        for t in ["true", "True", "yes", "ON"] { XCTAssertEqual(try node(t).bool, true, t) }
        for f in ["false", "No", "off"] { XCTAssertEqual(try node(f).bool, false, f) }
        XCTAssertNil(try node("!!str yes").bool)
        XCTAssertNil(try node("maybe").bool)
        for n in ["~", "null", "NULL", ""] { XCTAssertTrue(try node(n).isNull, "'\(n)'") }
        XCTAssertFalse(try node("'null'").isNull, "quoted null is text")
        XCTAssertEqual(try node("1_000").int, 1000)
        XCTAssertEqual(try node("0x1e").int, 30)
        XCTAssertEqual(try node("-12").int, -12)
        XCTAssertEqual(try node("1:30").int, 90)
        XCTAssertEqual(try node("2.5e1").float, 25)
        XCTAssertEqual(try node("-.inf").float, -.infinity)
        XCTAssertNil(try node("'2.5'").float, "quoted numbers are text")
    }

    func testAliasesResolveAndBadInputIsNamedWithItsLine() throws {
        let root = try XCTUnwrap(YAMLNode.compose("a: &x [1, 2]\nb: *x\n"))
        XCTAssertEqual(root.pairs[1].value.items.map(\.string), ["1", "2"])
        XCTAssertNil(try YAMLNode.compose("# nothing\n"))
        XCTAssertThrowsError(try YAMLNode.compose("a: *missing\n")) { XCTAssertTrue("\($0)".contains("unknown alias *missing"), "\($0)") }
        XCTAssertThrowsError(try YAMLNode.compose("a: 1\n---\nb: 2\n")) { XCTAssertTrue("\($0)".contains("line 2"), "\($0)") }
        XCTAssertThrowsError(try YAMLNode.compose("gpsd:\n  host: [a\n")) { e in
            let e = e as! YAMLError
            XCTAssertGreaterThanOrEqual(e.line, 2, "\(e)")
            XCTAssertFalse(e.problem.isEmpty)
        }
    }
}

private extension YAMLNode {
    var pairs: [(key: YAMLNode, value: YAMLNode)] {
        if case .mapping(let p, _) = self { return p }
        return []
    }
    var items: [YAMLNode] {
        if case .sequence(let i, _) = self { return i }
        return []
    }
}
