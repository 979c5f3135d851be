@testable import BearingTerminal
import FoundationEssentials
import XCTest

/// The `--json` results of calibrate, the accelerometer calibration and level keep every key: one that does not
/// apply is null, never left out, so a script can rely on it (`WrittenAsNull`).
final class ResultKeysTests: XCTestCase {
    func testAKeyWithoutAValueIsNullAndOneWithAValueIsItself() throws {
        let result = LevelReport.Result(roll: 1.5, pitch: -2, tilt: 2.5, specific_force: [0, 0, 9.81], magnitude: 9.81, duration: 3,
                                        samples: 300, source: "sensor", device: nil, accelerometer_calibration: "/etc/bearing/acc.json",
                                        previous: nil, warnings: [], saved: nil, not_saved: "--no-save", daemon: nil)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let text = String(decoding: try encoder.encode(result), as: UTF8.self)
        for key in ["device", "previous", "saved", "daemon"] {
            XCTAssertTrue(text.contains("\"\(key)\":null"), "\(key) missing or not null: \(text)")
        }
        XCTAssertTrue(text.contains(#""accelerometer_calibration":"/etc/bearing/acc.json""#), text)
        XCTAssertTrue(text.contains(#""not_saved":"--no-save""#), text)
        XCTAssertTrue(text.hasPrefix(#"{"accelerometer_calibration":"/etc/bearing/acc.json","class":"LEVEL_RESULT","daemon":null,"#), text)
    }
}
