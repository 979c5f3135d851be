@testable import BearingModel
@testable import BearingAttitude
@testable import BearingWire
@testable import BearingPublishing
@testable import BearingCalibration
import BearingSimulator
@testable import BearingMarine
@testable import BearingMQTT
import Foundation
import XCTest

/// The mounting level: measured from a still board's specific force, refused when the board moves or sits
/// too far off level, kept in a file.
final class MountingLevelTests: XCTestCase {
    static let g = 9.80665

    /// Board frame (forward, right, down) specific force of a board at rest with this roll and pitch.
    static func force(roll: Double, pitch: Double) -> Vector3 {
        let (r, p) = (roll * .pi / 180, pitch * .pi / 180)
        return Vector3(g * sin(p), -g * cos(p) * sin(r), -g * cos(p) * cos(r))
    }

    func testTheLevelTakesTheBoardBackToLevelWithoutTurningIt() {
        let f = Self.force(roll: 5, pitch: -3)
        let level = MountingLevel(specificForce: f)
        XCTAssertEqual(level.roll, 5, accuracy: 1e-9)
        XCTAssertEqual(level.pitch, -3, accuracy: 1e-9)
        let levelled = level.apply(f)
        XCTAssertEqual(levelled.x, 0, accuracy: 1e-9)
        XCTAssertEqual(levelled.y, 0, accuracy: 1e-9)
        XCTAssertEqual(levelled.z, -Self.g, accuracy: 1e-9)
        // The forward axis stays in the vertical plane through x: headings are unchanged.
        XCTAssertEqual(level.apply(Vector3(1, 0, 0)).y, 0, accuracy: 1e-12)
        XCTAssertEqual(level.tilt, acos(cos(5 * .pi / 180) * cos(3 * .pi / 180)) * 180 / .pi, accuracy: 1e-9)
        XCTAssertEqual(MountingLevel.none.matrix, .identity)
        // Upside down is a 180° roll, not a level correction.
        XCTAssertEqual(MountingLevel(specificForce: Vector3(0, 0, Self.g)).tilt, 180, accuracy: 1e-9)
    }

    /// A `VirtualIMU` board heeled 4° and nose down 2.5°, read in forward-left-up chip axes and turned into the
    /// board frame as the daemon does (`+X-Y-Z`): the level is the board's own roll and pitch.
    func testMeasuredFromAStillStretchAfterMovement() throws {
        var imu = VirtualIMU(heading: { _ in 70 })
        imu.roll = { $0 < 3 ? 30 * sin($0 * 3) : 4 }
        imu.pitch = { $0 < 3 ? 20 * sin($0 * 2) : -2.5 }
        imu.accNoise = 0.03
        imu.gyroNoise = 0.002
        var m = LevelMeasurement(duration: 5)
        var done = false
        for r in imu.readings(duration: 12) where !done {
            let a = r.sample.accelerometer, w = r.sample.gyroscope
            done = m.add(time: r.sample.time, specificForce: Vector3(a.x, -a.y, -a.z), angularRate: Vector3(w.x, -w.y, -w.z))
        }
        XCTAssertTrue(done)
        let (level, pose) = try m.result()
        XCTAssertEqual(level.roll, 4, accuracy: 0.02)
        XCTAssertEqual(level.pitch, -2.5, accuracy: 0.02)
        XCTAssertEqual(pose.start, 3, accuracy: 0.2, "the stretch starts when the board stops")
        XCTAssertGreaterThanOrEqual(pose.duration, 5)
    }

    func testAMovingBoardGivesNoLevel() {
        var imu = VirtualIMU(heading: { 5 * $0 })
        imu.roll = { 8 * sin($0) }
        var m = LevelMeasurement(duration: 5)
        for r in imu.readings(duration: 20) { m.add(time: r.sample.time, specificForce: r.sample.accelerometer, angularRate: r.sample.gyroscope) }
        XCTAssertThrowsError(try m.result()) {
            XCTAssertTrue("\($0)".hasPrefix("the board was not still: the longest still stretch lasted "), "\($0)")
            XCTAssertTrue("\($0)".contains("of the 5.0 s needed"), "\($0)")
        }
    }

    func testTooMuchTiltIsRefusedUnlessForcedAndNeverBeyond45Degrees() {
        XCTAssertNil(MountingLevel(roll: 12, pitch: -15).refusal(force: false))
        let steep = MountingLevel(roll: 25, pitch: 3)
        XCTAssertTrue(steep.refusal(force: false)?.contains("more than 20°: is it on its mount? --force accepts up to 45°") ?? false, "\(String(describing: steep.refusal(force: false)))")
        XCTAssertNil(steep.refusal(force: true))
        let sideways = MountingLevel(roll: 50, pitch: 0)
        XCTAssertTrue(sideways.refusal(force: true)?.contains("imu.orientation") ?? false)
    }

    func testTheFileRoundTripsAndBadFilesAreNamed() throws {
        let level = MountingLevel(roll: 5, pitch: -3)
        let pose = StaticPose(start: 0, duration: 5, samples: 480, specificForce: Self.force(roll: 5, pitch: -3), noise: 0.02, angularRate: nil)
        let record = MountingLevelRecord(level: level, pose: pose, device: "i2c:/dev/i2c-1:0x6a", accelerometerCalibration: "2026-11-20T10:00:00.000Z",
                                         warnings: [], time: GPSTimestamp(unixTime: 1_795_000_000))
        let data = record.encoded()
        let back = try MountingLevelRecord.decode(data, source: "level.json")
        XCTAssertEqual(back, record)
        XCTAssertEqual(try back.level(), level)
        XCTAssertTrue(String(decoding: data, as: UTF8.self).contains("\"specific_force\""))

        func rejected(_ edit: (inout [String: Any]) -> Void, _ expected: String, line: UInt = #line) throws {
            var o = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
            edit(&o)
            XCTAssertThrowsError(try MountingLevelRecord.decode(try JSONSerialization.data(withJSONObject: o), source: "level.json"), line: line) {
                XCTAssertTrue("\($0)".hasPrefix("level.json: ") && "\($0)".contains(expected), "\($0)", line: line)
            }
        }
        try rejected({ $0["units"] = "rad" }, "units \"rad\": roll and pitch are in degrees")
        try rejected({ $0["roll"] = 60 }, "more than 45° is not a level correction")
        try rejected({ $0["format"] = "bearing-level/2" }, "is not \"bearing-level/1\"")
        try rejected({ $0.removeValue(forKey: "pitch") }, "missing \"pitch\"")
        try rejected({ $0["roll"] = "5" }, "\"roll\" has the wrong type")
        XCTAssertThrowsError(try MountingLevelRecord.decode(Data("[1,2".utf8), source: "level.json")) {
            XCTAssertEqual("\($0)", "level.json: not a mounting level file: invalid JSON")
        }
    }
}
