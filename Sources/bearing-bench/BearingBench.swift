import ArgumentParser
import BearingModel
import BearingPOSIX

/// `bearing-bench`: the workloads the scripts in bench/ measure (wall time, instructions under callgrind,
/// RSS). Built by those scripts, not shipped in the .deb; the same workloads and code as when they were
/// hidden `bearing bench-*` commands, so their counts stay comparable.
@main
struct BearingBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bearing-bench",
        abstract: "Bearing's benchmark workloads, for the scripts in bench/.",
        version: Release.version,
        subcommands: [BenchCompass.self, BenchCalibration.self, BenchFanout.self, BenchBlackBox.self]
    )
}

/// A benchmark that cannot run: its message on standard error, then exit status 1.
enum BenchFailure {
    static func failure(_ message: String) -> ExitCode {
        Syscall.printToStandardError("Error: \(message)\n")
        return ExitCode(1)
    }
}
