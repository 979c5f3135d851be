import BearingModel
@testable import BearingConfig
@testable import BearingMarine
@testable import BearingMQTT
@testable import BearingDaemon
import Foundation
import TestSupport
import XCTest

/// Board profiles and the compass sections of the config.
final class BoardConfigTests: XCTestCase {
    let boards = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("boards")

    func testEveryShippedBoardProfileParses() throws {
        for name in ["rpi-3b", "rpi-4b", "rpi-5", "rpi-zero-2w", "simulator"] {
            let p = try BoardProfile.load(boards.appendingPathComponent("\(name).yaml").path)
            XCTAssertEqual(p.name, name)
            XCTAssertFalse(p.modules.isEmpty)
            let c = try p.baseConfig(module: nil)
            XCTAssertTrue(c.magnetometer.enabled)
            XCTAssertEqual(c.magnetometer.reader.bus, name == "simulator" ? "simulator" : "/dev/i2c-1")
        }
        let pi4 = try BoardProfile.load(boards.appendingPathComponent("rpi-4b.yaml").path)
        let hat = try pi4.baseConfig(module: "adafruit-gps-hat-lis3mdl")
        XCTAssertEqual(hat.magnetometer.reader.chip, "lis3mdl")
        XCTAssertEqual(hat.magnetometer.reader.address, 0x1C)
        XCTAssertThrowsError(try pi4.baseConfig(module: "nope")) { XCTAssertTrue("\($0)".contains("no module \"nope\"")) }
    }

    func testConfigOverridesTheBoard() throws {
        let base = try BoardProfile.load(boards.appendingPathComponent("rpi-5.yaml").path).baseConfig(module: "bn-880-hmc5883l")
        let c = try AgentConfig.parse(yaml: """
            magnetometer:
              address: 0x1f
              rate: 25
              orientation: "+Y+X-Z"
              rotation: [0, 0, 12.5]
            heading:
              fallback_position: [50.8, -1.1]
            pipeline:
              att: [{op: smooth, samples: 4}, {op: throttle, interval: 0.25}]
            """, source: "bearing.yaml", over: base)
        XCTAssertEqual(c.magnetometer.reader.chip, "hmc5883l", "from the board")
        XCTAssertEqual(c.magnetometer.reader.address, 0x1F, "from the file")
        XCTAssertEqual(c.magnetometer.reader.settings.rate, 25)
        XCTAssertEqual(c.magnetometer.orientation.axes, "+Y+X-Z")
        XCTAssertEqual(c.magnetometer.orientation.rotation, Vector3(0, 0, 12.5))
        XCTAssertEqual(c.heading.fallbackPosition, Vector3(50.8, -1.1, 0))
        XCTAssertEqual(c.attPipeline, [.smooth(samples: 4), .throttle(interval: 0.25, latest: true)])
    }

    func testBadCompassValuesNameFileLineKeyAndWhatIsAllowed() {
        func rejected(_ yaml: String, _ words: [String], line: UInt = #line) {
            XCTAssertThrowsError(try AgentConfig.parse(yaml: yaml, source: "bearing.yaml"), line: line) { e in
                for w in words { XCTAssertTrue("\(e)".contains(w), "\(e) lacks \(w)", line: line) }
            }
        }
        rejected("magnetometer:\n  chip: hmc5883\n", ["bearing.yaml:2", "magnetometer.chip", "\"hmc5883\"", "qmc5883l"])
        rejected("magnetometer:\n  address: 0x99\n", ["bearing.yaml:2", "magnetometer.address", "0x03 to 0x77"])
        rejected("magnetometer:\n  bus: i2c-1\n", ["magnetometer.bus", "/dev/i2c-1"])
        rejected("magnetometer:\n  orientation: \"+X+Y-Z\"\n", ["bearing.yaml:2", "mirror"])
        rejected("magnetometer:\n  rate: 0\n", ["magnetometer.rate", "samples per second"])
        rejected("magnetometer:\n  speed: 3\n", ["unknown key \"magnetometer.speed\"", "allowed here"])
        rejected("heading:\n  fallback_position: [95, 0]\n", ["heading.fallback_position", "-90…90"])
        rejected("pipeline:\n  att: [{op: min_mode, mode: 2}]\n", ["does not apply to ATT", "smooth"])
        rejected("pipeline:\n  tpv: [{op: smooth, samples: 3}]\n", ["does not apply to TPV"])
    }

    func testBadBoardProfilesAreRefusedClearly() {
        XCTAssertThrowsError(try BoardProfile.parse(yaml: "name: x\ni2c_bus: /dev/i2c-1\nmodules:\n  - {name: m, chip: foo, address: 0x1e}\n", source: "x.yaml")) {
            XCTAssertTrue("\($0)".contains("x.yaml:4"), "\($0)")
            XCTAssertTrue("\($0)".contains("modules[0].chip"), "\($0)")
        }
        XCTAssertThrowsError(try BoardProfile.load("no-such-board")) {
            XCTAssertTrue("\($0)".contains("board \"no-such-board\" not found"), "\($0)")
        }
    }
}
