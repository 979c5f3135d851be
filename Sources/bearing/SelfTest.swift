import ArgumentParser
import BearingCalibrationWorkflow

struct SelfTestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "selftest", abstract: "Check the board's sensors against their datasheets and the board profile; --markdown: a report for an issue.",
        discussion: "At rest: ID, configuration read back (clones), rate, I2C errors, stuck and saturated axes, noise against the datasheet, gyroscope bias, gravity, "
            + "the WMM's field and dip; --moves: the IMU's axis signs and the orientation line to use. Exit status 1 when a line fails (docs/selftest.md).")

    @OptionGroup var boardOptions: BoardOptions
    @OptionGroup var source: SensorSourceOptions
    @Option(help: "Seconds read at rest per sensor.") var seconds: Double = 10
    @Flag(help: "Also the guided moves (turn, tip, roll) that check the axis signs.") var moves = false
    @Option(help: "LAT,LON for the WMM's field and dip (default: heading.fallback_position of the config).") var position: String?
    @Flag(help: "Print the report as Markdown, for an issue.") var markdown = false
    @Flag(help: "Give the position in full in the report (else rounded to about 1 km).") var precisePosition = false

    func run() throws {
        let config = try boardOptions.resolve()
        var s = SelfTestSession(magnetometer: config.magnetometer, imu: config.imu, socketPath: source.socketPath(config))
        do {
            try s.set(bus: source.busPath, direct: source.direct, seconds: seconds, moves: moves, board: boardOptions.board,
                      position: position, fallback: config.heading.fallbackPosition, precisePosition: precisePosition)
            let report = try s.run(say: SelfTestSession.sayOnStandardError, progress: SelfTestSession.barOnStandardError)
            print(markdown ? report.markdown : report.table)
            if report.worst == .fail { throw ExitCode(1) }
        } catch let refused as SelfTestSession.Refused { throw ExitStatus.failure(refused.description) }
    }
}
