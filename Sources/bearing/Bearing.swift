import ArgumentParser
import BearingModel

@main
struct Bearing: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bearing",
        abstract: "Where this board is and which way it points: a gpsd and compass agent.",
        discussion: ExitStatus.discussion,
        version: Release.version,
        subcommands: [Run.self, Watch.self, Probe.self, Calibrate.self, Level.self, AttitudeCommand.self, Declination.self, Operators.self, SimulateTrack.self, BlackBoxCommand.self, RecordCommand.self, ReplayCommand.self, ReportCommand.self, SelfTestCommand.self, Swing.self, WebCredentialCommand.self]
    )
}
