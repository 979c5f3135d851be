import ArgumentParser
import BearingSimulator
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

struct SimulateTrack: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate-track",
        abstract: "Write a generated NMEA track (for gpsfake) with a fix loss and recovery.")

    @Option(help: "Number of one-second epochs.") var epochs = 120
    @Option(help: "Random seed; the same seed gives the same track.") var seed: UInt64 = 1
    @Option(name: .shortAndLong, help: "Output file (default: standard output).") var output: String?

    func validate() throws {
        guard epochs >= 10 && epochs <= 1_000_000 else { throw ValidationError("--epochs must be from 10 to 1000000") }
    }

    func run() throws {
        var options = NMEATrack.Options()
        options.epochs = epochs
        options.seed = seed
        let text = NMEATrack(options).text
        if let output {
            try AtomicFile.write(Array(text.utf8), to: output)
        } else {
            try Syscall.writeStandardOutput(Array(text.utf8))
        }
    }
}
