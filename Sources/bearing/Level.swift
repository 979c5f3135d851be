import ArgumentParser
import BearingCalibrationWorkflow
import BearingTerminal
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
        let warnings = LevelFinishing.warnings(input, pose: pose)
        let (saved, notSaved) = try LevelFinishing(force: force, noSave: noSave)
            .save(level, pose: pose, input: input, warnings: warnings, to: output ?? input.daemonFile ?? config.levelPath)
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
