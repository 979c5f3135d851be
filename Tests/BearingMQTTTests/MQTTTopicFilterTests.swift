import BearingMQTT
import XCTest

/// MQTT 3.1.1 §4.7's topic filters, with the spec's own examples (§4.7.1.2, §4.7.1.3, §4.7.2).
final class MQTTTopicFilterTests: XCTestCase {
    func filter(_ s: String) throws -> MQTTTopicFilter { try XCTUnwrap(MQTTTopicFilter(s), s) }

    func testValidFilters() {
        for s in ["#", "+", "a/#", "+/+", "/+", "a//b", "sport/+/player1", "+/tennis/#", "$SYS/#", "a/b c/d"] {
            XCTAssertNotNil(MQTTTopicFilter(s), s)
        }
        for s in ["", "a#", "a/#/b", "sport+", "a/b+/c", "#/a", "a/##"] {
            XCTAssertNil(MQTTTopicFilter(s), s)
        }
    }

    func testMultiLevelWildcardMatchesTheParentAndEveryLevelBelow() throws {
        let f = try filter("sport/tennis/player1/#")
        for t in ["sport/tennis/player1", "sport/tennis/player1/ranking", "sport/tennis/player1/score/wimbledon", "sport/tennis/player1/"] {
            XCTAssertTrue(f.matches(t), t)
        }
        for t in ["sport/tennis/player2", "sport/tennis", "sport/tennis/player10"] { XCTAssertFalse(f.matches(t), t) }
        XCTAssertTrue(try filter("sport/#").matches("sport"))
        XCTAssertTrue(try filter("#").matches("bearing/dev1/pipelines/status"))
        XCTAssertTrue(try filter("#").matches("/"))
    }

    func testSingleLevelWildcardMatchesExactlyOneLevel() throws {
        let f = try filter("sport/tennis/+")
        XCTAssertTrue(f.matches("sport/tennis/player1"))
        XCTAssertTrue(f.matches("sport/tennis/"), "an empty level is a level")
        XCTAssertFalse(f.matches("sport/tennis/player1/ranking"))
        XCTAssertFalse(f.matches("sport/tennis"))
        XCTAssertFalse(try filter("sport/+").matches("sport"))
        XCTAssertTrue(try filter("sport/+").matches("sport/"))
        XCTAssertTrue(try filter("+/+").matches("/finance"))
        XCTAssertTrue(try filter("/+").matches("/finance"))
        XCTAssertFalse(try filter("+").matches("/finance"))
        XCTAssertTrue(try filter("+/dev1/pipelines/status").matches("bearing/dev1/pipelines/status"))
        XCTAssertTrue(try filter("bearing/+/+/status").matches("bearing/dev1/pipelines/status"))
        XCTAssertFalse(try filter("bearing/+/status").matches("bearing/dev1/pipelines/status"))
    }

    func testLiteralsMatchExactlyAndCaseSensitively() throws {
        XCTAssertTrue(try filter("bearing/fleet/pipelines").matches("bearing/fleet/pipelines"))
        XCTAssertFalse(try filter("bearing/fleet/pipelines").matches("Bearing/fleet/pipelines"))
        XCTAssertFalse(try filter("bearing/fleet/pipelines").matches("bearing/fleet/pipelines/"))
        XCTAssertFalse(try filter("a").matches(""), "a topic is never empty")
        XCTAssertFalse(try filter("#").matches("a/+"), "a topic name has no wildcards")
    }

    func testWildcardsInTheFirstLevelDoNotMatchDollarTopics() throws {
        XCTAssertFalse(try filter("#").matches("$SYS/broker/clients"))
        XCTAssertFalse(try filter("+/monitor/Clients").matches("$SYS/monitor/Clients"))
        XCTAssertTrue(try filter("$SYS/#").matches("$SYS/monitor/Clients"))
        XCTAssertTrue(try filter("$SYS/monitor/+").matches("$SYS/monitor/Clients"))
        XCTAssertTrue(try filter("a/+").matches("a/$b"), "only the first level")
    }

    func testTwoFiltersOverlapWhenSomeTopicMatchesBoth() throws {
        let pairs: [(String, String, Bool)] = [
            ("bearing/#", "bearing/+/status", true),
            ("+/dev1/pipelines/status", "bearing/+/pipelines/status", true),
            ("bearing/+/status", "bearing/+/pipelines/status", false),
            ("a/#", "a", true),
            ("a/+", "a", false),
            ("#", "$SYS/x", false),
            ("+", "$SYS", false),
            ("$SYS/#", "$SYS/+", true),
            ("#", "+", true),
            ("homeassistant/+/+/+/config", "homeassistant/sensor/bearing_dev1/heading/config", true),
            ("bearing/fleet/pipelines", "bearing/+/pipelines/status", false),
        ]
        for (a, b, expected) in pairs {
            XCTAssertEqual(try filter(a).overlaps(filter(b)), expected, "\(a) ∩ \(b)")
            XCTAssertEqual(try filter(b).overlaps(filter(a)), expected, "\(b) ∩ \(a)")
        }
    }
}
