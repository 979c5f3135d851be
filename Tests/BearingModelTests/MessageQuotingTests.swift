import BearingModel
import BearingWire
import XCTest

/// `shownInMessage`, how any input is quoted in a message, and `JSONValue.repeatedKey`, the one rule on
/// repeated keys.
final class MessageQuotingTests: XCTestCase {
    func testControlCharactersAreEscapedAsJSONDoes() {
        XCTAssertEqual("a\nb\rc\td".shownInMessage(), #"a\nb\rc\td"#)
        XCTAssertEqual("\u{0}\u{1B}[2J\u{0B}\u{7F}".shownInMessage(), #"\u0000\u001b[2J\u000b\u007f"#)
        XCTAssertEqual("c1\u{85}\u{9F} ls\u{2028}ps\u{2029}".shownInMessage(), #"c1\u0085\u009f ls\u2028ps\u2029"#)
        XCTAssertEqual("plain \"quoted\" \\ é 🛥 ⏎".shownInMessage(), "plain \"quoted\" \\ é 🛥 ⏎", "only control characters change")
        XCTAssertEqual("\r\n".shownInMessage(), #"\r\n"#, "CR LF is one Character but two escapes")
    }

    func testLongStringsAreCutWithAnEllipsisWithinTheLimit() {
        XCTAssertEqual(String(repeating: "x", count: 64).shownInMessage(), String(repeating: "x", count: 64), "64 fits")
        XCTAssertEqual(String(repeating: "x", count: 65).shownInMessage(), String(repeating: "x", count: 63) + "…")
        XCTAssertEqual("abcdef".shownInMessage(limit: 4), "abc…")
        XCTAssertEqual("ab\u{1B}def".shownInMessage(limit: 6), "ab…", "an escape is not cut in two")
        XCTAssertEqual("ab\u{1B}".shownInMessage(limit: 8), #"ab\u001b"#, "the last one fits whole")
        for s in ["", "a", String(repeating: "\u{1B}", count: 1000), String(repeating: "é", count: 70), "ab\u{1B}def"] {
            for limit in 1...80 {
                let shown = s.shownInMessage(limit: limit)
                XCTAssertLessThanOrEqual(shown.unicodeScalars.count, limit, "\(s.debugDescription) at \(limit): \(shown)")
                XCTAssertEqual(shown.shownInMessage(limit: limit), shown, "shown twice is shown once")
            }
        }
    }

    func testRepeatedKeysAreFoundAtAnyDepthAndNamedByPath() throws {
        func repeated(_ json: String) throws -> String? { try JSONValue.parse(json).repeatedKey }
        XCTAssertNil(try repeated(#"{"a":1,"b":{"a":2,"c":[{"a":3},{"a":4}]}}"#), "the same key in different objects is no repeat")
        XCTAssertNil(try repeated(#"[1,"a",{"a":1}]"#))
        XCTAssertEqual(try repeated(#"{"a":1,"a":2}"#), #""a" appears twice"#)
        XCTAssertEqual(try repeated(#"{"a":{"b":[0,{"c":1,"c":2}]}}"#), #""a.b[1].c" appears twice"#)
        XCTAssertEqual(try repeated(#"[{"x":[]},{"y":1,"y":1}]"#), #""[1].y" appears twice"#)
        XCTAssertEqual(try repeated(#"{"a":{"x":1,"x":2},"a":3}"#), #""a.x" appears twice"#, "the first in document order")
        XCTAssertEqual(try repeated(#"{"[0]":{"k":1,"k":1}}"#), #""[0].k" appears twice"#)
        let long = String(repeating: "k", count: 5000)
        let named = try XCTUnwrap(repeated(#"{"\#(long)":1,"\#(long)":2,"esc\u001b":1,"esc\u001b":2}"#))
        XCTAssertLessThanOrEqual(named.count, 150)
        XCTAssertEqual(try repeated(#"{"esc\u001b":1,"esc\u001b":2}"#), #""esc\u001b" appears twice"#)
    }
}
