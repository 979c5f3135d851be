import BearingCalibration
import BearingCalibrationWorkflow
import BearingModel
import FoundationEssentials

/// The result of `bearing level`: a few readable lines, or (`--json`) one JSON object.
public struct LevelReport {
    public var level: MountingLevel
    public var pose: StaticPose
    public var input: LevelInput
    public var warnings: [String]
    public var saved: String?
    public var notSaved: String?
    public var daemon: String?

    public init(level: MountingLevel, pose: StaticPose, input: LevelInput, warnings: [String], saved: String?, notSaved: String?, daemon: String?) {
        self.level = level
        self.pose = pose
        self.input = input
        self.warnings = warnings
        self.saved = saved
        self.notSaved = notSaved
        self.daemon = daemon
    }

    public func print(json: Bool) {
        guard !json else { return Swift.print(jsonText) }
        let f = pose.specificForce
        var lines = [String(printf: "mounting level: roll %.2f°, pitch %.2f° (tilt %.2f°), from %.1f s still (%d samples, %@)",
                            level.roll, level.pitch, level.tilt, pose.duration, pose.samples, input.source)]
        lines.append(String(printf: "  specific force (%.4f, %.4f, %.4f) m/s², |f| %.4f m/s² (board frame, not levelled)", f.x, f.y, f.z, f.length))
        lines.append("  accelerometer calibration: " + (input.accelerometerCalibration.map { "fitted \($0)" } ?? "none"))
        if let p = input.previous { lines.append(String(printf: "  replaces the level in force: roll %.2f°, pitch %.2f°", p.roll, p.pitch)) }
        for w in warnings { lines.append("  warning: \(w)") }
        lines += CalibrationSaving.outcomeLines(saved: saved, notSaved: notSaved, daemon: daemon)
        Swift.print(lines.joined(separator: "\n"))
    }

    /// The `--json` object; every key is present (null when it does not apply).
    struct Result: Encodable {
        struct Angles: Encodable { var roll, pitch: Double }
        var `class` = "LEVEL_RESULT"
        var roll, pitch, tilt: Double
        var specific_force: [Double]
        var magnitude, duration: Double
        var samples: Int
        var source: String
        @WrittenAsNull var device: String?
        @WrittenAsNull var accelerometer_calibration: String?
        @WrittenAsNull var previous: Angles?
        var warnings: [String]
        @WrittenAsNull var saved: String?
        @WrittenAsNull var not_saved: String?
        @WrittenAsNull var daemon: String?
    }

    var jsonText: String {
        let f = pose.specificForce
        let result = Result(roll: level.roll, pitch: level.pitch, tilt: level.tilt, specific_force: [f.x, f.y, f.z], magnitude: f.length,
                            duration: pose.duration, samples: pose.samples, source: input.source, device: input.device,
                            accelerometer_calibration: input.accelerometerCalibration,
                            previous: input.previous.map { Result.Angles(roll: $0.roll, pitch: $0.pitch) }, warnings: warnings,
                            saved: saved, not_saved: notSaved, daemon: daemon)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(result)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
