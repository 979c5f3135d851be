import BearingModel
import BearingWire
import XCTest

final class JSONValueTests: XCTestCase {
    func testParsesEveryKindAndKeepsKeyOrder() throws {
        let v = try JSONValue.parse(#" {"b":1,"a":[true,false,null,-0.5e2,"x\"y\u00e9\ud83d\ude00"],"c":{}} "#)
        XCTAssertEqual(v.entries?.map(\.0), ["b", "a", "c"])
        XCTAssertEqual(v["a"], .list([.bool(true), .bool(false), .null, .number(-50), .string("x\"yé😀")]))
        XCTAssertEqual(v.json, #"{"b":1,"a":[true,false,null,-50,"x\"yé😀"],"c":{}}"#)
        XCTAssertEqual(try JSONValue.parse(v.json), v, "writing and reading again gives the same tree")
    }

    func assertFails(_ text: String, _ message: String, at offset: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try JSONValue.parse(text), file: file, line: line) { error in
            guard let e = error as? JSONParseError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(e.message, message, file: file, line: line)
            XCTAssertEqual(e.offset, offset, file: file, line: line)
        }
    }

    func testErrorsSayWhatAndWhere() {
        assertFails("", "unexpected end of input", at: 0)
        assertFails(#"{"a":1,}"#, "expected a quoted key, got '}'", at: 7)
        assertFails(#"{"a" 1}"#, "expected ':' after key \"a\"", at: 5)
        assertFails("[1 2]", "expected ',' or ']' in a list, got '2'", at: 3)
        assertFails(#""abc"#, "unterminated string", at: 0)
        assertFails("\"a\u{1}\"", "control character byte 0x1 inside a string", at: 2)
        assertFails(#""\q""#, "bad escape \\'q'", at: 1)
        assertFails(#""\ud800x""#, "unpaired surrogate in a \\u escape", at: 7)
        assertFails("01", "unexpected text after the JSON value", at: 1)
        assertFails("1.", "a number needs digits after '.'", at: 0)
        assertFails("-", "a number needs digits", at: 0)
        assertFails("1e400", "number 1e400 is too large to represent", at: 0)
        assertFails("tru", "unexpected end of input", at: 0)
        assertFails("nul!", "unexpected character '!'", at: 3)
        assertFails(String(repeating: "[", count: 100), "nested more than 64 deep", at: 64)
        XCTAssertThrowsError(try JSONValue.parse(bytes: [0x22, 0xff, 0x22])) { XCTAssertTrue("\($0)".contains("not valid UTF-8")) }
    }

    func testNumbersThatFit() throws {
        XCTAssertEqual(try JSONValue.parse("1e308"), .number(1e308))
        XCTAssertEqual(try JSONValue.parse("-0"), .number(-0.0))
        XCTAssertEqual(try JSONValue.parse("123456789012345678901234567890").number, 1.2345678901234568e29)
        XCTAssertEqual(try JSONValue.parse("3").int, 3)
        XCTAssertNil(try JSONValue.parse("3.5").int)
    }
}
