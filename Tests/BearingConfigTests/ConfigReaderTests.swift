import BearingConfig
import BearingModel
import BearingWire
import BearingYAML
import XCTest

/// The config reader on its own: a YAML node to a typed value, every refusal naming the file, the line, the
/// key and the value, and what is allowed.
final class ConfigReaderTests: XCTestCase {
    let reader = ConfigReader(source: "/etc/bearing/bearing.yaml")

    /// The value of `key: YAML` on line 3 of a file.
    func value(_ yaml: String) throws -> YAMLNode {
        guard case .mapping(let pairs, _)? = try YAMLNode.compose("\n\nkey: \(yaml)\n"), let first = pairs.first else {
            throw ConfigError("the test's YAML is not a mapping")
        }
        return first.value
    }

    func refusal(_ body: () throws -> Void) -> String {
        do { try body() } catch { return "\(error)" }
        return "(accepted)"
    }

    func testNumbersInRangeAreReadAndOthersNamed() throws {
        XCTAssertEqual(try reader.int(value("8"), "socket.backlog", 1...64), 8)
        XCTAssertEqual(refusal { _ = try reader.int(value("65"), "socket.backlog", 1...64) },
                       #"/etc/bearing/bearing.yaml:3: socket.backlog: "65" is not allowed; a whole number from 1 to 64"#)
        XCTAssertEqual(refusal { _ = try reader.int(value("many"), "socket.backlog", 1...64) },
                       #"/etc/bearing/bearing.yaml:3: socket.backlog: "many" is not allowed; a whole number from 1 to 64"#)
        XCTAssertEqual(try reader.seconds(value("0.5"), "gpsd.retry_initial", 0.01...60), 0.5)
        XCTAssertTrue(refusal { _ = try reader.seconds(value("-1"), "gpsd.retry_initial", 0.01...60) }.contains("gpsd.retry_initial"))
    }

    func testAListOrAMappingWhereAValueBelongsIsNamed() throws {
        XCTAssertEqual(refusal { _ = try reader.scalar(value("[1, 2]"), "log.level") },
                       "/etc/bearing/bearing.yaml:3: log.level: a list is not allowed; expected a single value")
        XCTAssertEqual(refusal { _ = try reader.scalar(value("{a: 1}"), "log.level") },
                       "/etc/bearing/bearing.yaml:3: log.level: a mapping is not allowed; expected a single value")
        XCTAssertEqual(refusal { _ = try reader.string(value("''"), "mqtt.device", nonEmpty: true) },
                       "/etc/bearing/bearing.yaml:3: mqtt.device: an empty string is not allowed; must not be empty")
    }

    func testBusesAddressesAndChainsAreReadOrNamed() throws {
        XCTAssertEqual(try reader.busPath(value("1"), "magnetometer.bus"), "/dev/i2c-1")
        XCTAssertEqual(try reader.busPath(value("/dev/i2c-3"), "magnetometer.bus"), "/dev/i2c-3")
        XCTAssertTrue(refusal { _ = try reader.busPath(value("usb0"), "magnetometer.bus") }.contains("magnetometer.bus: \"usb0\""))
        XCTAssertEqual(try reader.i2cAddress(value("0x0d"), "magnetometer.address"), 0x0D)
        XCTAssertTrue(refusal { _ = try reader.i2cAddress(value("0x90"), "magnetometer.address") }.contains("magnetometer.address"))
        let chain = try reader.chain(value("[{op: throttle, interval: 2}]"), "pipeline.att", stream: .att)
        XCTAssertEqual(chain, [.throttle(interval: 2, latest: true)])
        let bad = refusal { _ = try reader.chain(value("[{op: throttle, interval: -2}]"), "pipeline.att", stream: .att) }
        XCTAssertTrue(bad.contains("pipeline.att") && bad.contains("interval"), bad)
    }
}
