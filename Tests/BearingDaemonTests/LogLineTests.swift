import BearingLog
import BearingMQTT
import BearingDaemon
import XCTest

/// A log line is one line of showable text whatever the message quotes (issue 26, item 4): a newline shows
/// as ` ⏎ `, every other control character as its JSON escape, in the message and in metadata; a line
/// without them is written as it always was.
final class LogLineTests: XCTestCase {
    let journald = JournaldLogHandler(journald: true)

    func testControlCharactersAreEscapedInMessagesAndMetadata() {
        XCTAssertEqual(journald.line(level: .warning, message: "version \"a\rb\u{0B}c\td\" refused", metadata: [:]),
                       "<4>version \"a\\rb\\u000bc\\td\" refused\n")
        XCTAssertEqual(journald.line(level: .error, message: "nul\u{0}esc\u{1B}[2Jdel\u{7F}", metadata: [:]),
                       "<3>nul\\u0000esc\\u001b[2Jdel\\u007f\n")
        XCTAssertEqual(journald.line(level: .info, message: "m", metadata: ["topic": "a\u{1B}b", "k\u{0}": "c\r\nd"]),
                       "<6>m k\\u0000=c\\r ⏎ d topic=a\\u001bb\n")
        XCTAssertEqual(journald.line(level: .notice, message: "c1\u{85}ls\u{2028}ps\u{2029}", metadata: [:]),
                       "<5>c1\\u0085ls\\u2028ps\\u2029\n")
        let terminal = JournaldLogHandler(journald: false).line(level: .info, message: "\u{1B}]0;title\u{7}", metadata: [:])
        XCTAssertTrue(terminal.hasSuffix(" INFO \\u001b]0;title\\u0007\n"), terminal)
    }

    func testLinesWithoutControlCharactersAreUnchanged() {
        XCTAssertEqual(journald.line(level: .notice, message: "shown", metadata: ["b": "2", "a": "1"]), "<5>shown a=1 b=2\n")
        XCTAssertEqual(journald.line(level: .critical, message: "line one\nline two", metadata: [:]), "<2>line one ⏎ line two\n")
        XCTAssertEqual(journald.line(level: .info, message: "MQTT: fleet pipelines version 2026-11-25.2 in force — ⏎ é 🛥 \\u001b",
                                     metadata: [:]),
                       "<6>MQTT: fleet pipelines version 2026-11-25.2 in force — ⏎ é 🛥 \\u001b\n")
    }
}
