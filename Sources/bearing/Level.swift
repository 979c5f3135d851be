import ArgumentParser
import BearingCalibrationWorkflow
import BearingDaemon
import BearingCalibration
import BearingModel
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

struct Level: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure how far the board sits off level on its mount, so that it reads roll = pitch = 0 on a level vehicle.",
        discussion: """
            Leave the board still on its mount with the vehicle (or bench) level. The calibrated specific force \
            of the first still stretch of --duration seconds gives the board's roll and pitch on its mount; \
            the daemon then turns every vector (accelerometer, gyroscope, magnetometer) by that rotation before \
            the attitude filter, leaving the heading as it was. Samples come from the running daemon's ATT \
            stream (the level in force is taken back out), else straight from the IMU of the board/config \
            (corrected by the accelerometer calibration, when there is one for its chip), else from --samples \
            FILE, an IMU recording in chip axes (as calibrate --accel --record writes). The result is written \
            atomically to the daemon's level file (level.json beside the calibration file, or imu.level) and \
            the daemon is asked to reload it. Exit status 2: the board was not still, or it is tilted more \
            than 20° (--force: up to 45°).
            """)

    @OptionGroup var boardOptions: BoardOptions
    @OptionGroup var source: SensorSourceOptions
    @Option(help: "Measure from this IMU recording instead (CSV t,acc_x,acc_y,acc_z[,gyr_x,gyr_y,gyr_z]: s, m/s², rad/s, chip axes).") var samples: String?
    @Option(help: "Seconds of stillness to average.") var duration: Double = 5
    @Option(help: "Give up after this many seconds without a still stretch that long.") var timeout: Double = 60
    @Option(help: "The accelerometer calibration to apply to raw samples (default: the config's file, when there is one).") var accelCalibration: String?
    @Option(help: "Write the level here instead of the daemon's level file.") var output: String?
    @Flag(help: "Do not write a level file.") var noSave = false
    @Flag(help: "Save a tilt of 20–45° (more than 45° is always refused).") var force = false
    @Flag(help: "Print the result as one JSON object (progress goes to stderr).") var json = false
    @Flag(help: "Plain progress lines even on a terminal.") var plain = false

    /// Exit status when the board was not still or is tilted too far.
    static let refused: Int32 = 2

    func validate() throws {
        guard duration >= 1, duration <= 600 else { throw ValidationError("--duration must be 1 to 600 seconds") }
        guard timeout > duration, timeout.isFinite else { throw ValidationError("--timeout must be longer than --duration") }
    }

    func run() throws {
        Syscall.ignoreSIGPIPE()
        let config = try boardOptions.resolve()
        let socketPath = source.socketPath(config)
        let progress = Progress(json: json, plain: plain)
        let input = try measure(config: config, socketPath: socketPath, progress: progress)
        for note in input.notes { progress.note(note) }
        if input.samples == 0 { throw CalibrateError("no samples within \(Int(timeout)) s: \(input.status)") }

        let level: MountingLevel, pose: StaticPose
        do { (level, pose) = try input.measurement.result() } catch {
            Syscall.printToStandardError("Error: \(error.message)\n")
            throw ExitCode(Self.refused)
        }
        var warnings: [String] = []
        if input.accelerometerCalibration == nil {
            warnings.append("the accelerometer is uncalibrated: its offset (tens of mg) reads as up to a few tenths of a degree of tilt; `bearing calibrate --accel` first")
        }
        let g = AccelerometerCalibrator.standardGravity
        let off = (pose.specificForce.length - g) / g * 100
        if abs(off) > 2 {
            warnings.append(String(printf: "|f| is %.3f m/s², %+.1f%% off g: is the accelerometer calibrated, and in m/s²?", pose.specificForce.length, off))
        }
        var notSaved: String?
        var saved: String?
        if let refusal = level.refusal(force: force) {
            notSaved = refusal
        } else if noSave {
            notSaved = "--no-save"
        } else {
            let target = output ?? input.daemonFile ?? config.levelPath
            let record = MountingLevelRecord(level: level, pose: pose, device: input.device, accelerometerCalibration: input.accelerometerCalibration,
                                             warnings: warnings, time: GPSTimestamp.now())
            try CalibrationSaving.writeFile(record.encoded(), to: target)
            saved = target
        }
        let daemon = saved == nil ? nil : CalibrationSaving.askDaemonToReload(socketPath, part: "level")
        LevelReport(level: level, pose: pose, input: input, warnings: warnings, saved: saved, notSaved: notSaved, daemon: daemon).print(json: json)
        if level.refusal(force: force) != nil { throw ExitCode(Self.refused) }
    }

    /// --samples FILE; else the running daemon (unless --direct); else the IMU itself.
    func measure(config: AgentConfig, socketPath: String, progress: Progress) throws -> LevelInput {
        if let samples {
            return try LevelSources.file(samples, duration: duration, calibration: try LevelSources.accelerometerCalibration(accelCalibration, defaultPath: config.accelerometerCalibrationPath),
                                         orientation: config.imu.orientation)
        }
        if !source.direct, let input = try LevelSources.daemon(socketPath, duration: duration, timeout: timeout, progress: progress) {
            return input
        }
        return LevelSources.sensor(try InertialInput.reader(config.imu, bus: source.busPath), duration: duration, timeout: timeout,
                                   calibration: try LevelSources.accelerometerCalibration(accelCalibration, defaultPath: config.accelerometerCalibrationPath),
                                   orientation: config.imu.orientation, progress: progress)
    }
}

/// The result of `bearing level`: a few readable lines, or (`--json`) one JSON object.
struct LevelReport {
    var level: MountingLevel
    var pose: StaticPose
    var input: LevelInput
    var warnings: [String]
    var saved: String?
    var notSaved: String?
    var daemon: String?

    func print(json: Bool) {
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
        var device, accelerometer_calibration: String?
        var previous: Angles?
        var warnings: [String]
        var saved, not_saved, daemon: String?

        func encode(to encoder: Encoder) throws {
            enum K: String, CodingKey {
                case `class`, roll, pitch, tilt, specific_force, magnitude, duration, samples, source, device, accelerometer_calibration
                case previous, warnings, saved, not_saved, daemon
            }
            var c = encoder.container(keyedBy: K.self)
            try c.encode(self.class, forKey: .class)
            try c.encode(roll, forKey: .roll)
            try c.encode(pitch, forKey: .pitch)
            try c.encode(tilt, forKey: .tilt)
            try c.encode(specific_force, forKey: .specific_force)
            try c.encode(magnitude, forKey: .magnitude)
            try c.encode(duration, forKey: .duration)
            try c.encode(samples, forKey: .samples)
            try c.encode(source, forKey: .source)
            try c.encode(device, forKey: .device)
            try c.encode(accelerometer_calibration, forKey: .accelerometer_calibration)
            try c.encode(previous, forKey: .previous)
            try c.encode(warnings, forKey: .warnings)
            try c.encode(saved, forKey: .saved)
            try c.encode(not_saved, forKey: .not_saved)
            try c.encode(daemon, forKey: .daemon)
        }
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
