import ArgumentParser
import BearingTerminal
import BearingCalibration
import BearingCalibrationWorkflow
import BearingClient
import BearingDaemon
import BearingModel
import BearingPOSIX
import BearingWire
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// `bearing swing`: the GNSS swing. ATT (every fused sample) and TPV from the daemon, or from a data log,
/// into `SwingCollector`; `SwingSolver` solves the heading offset, speed, current and the deviation curve;
/// on confirmation the curve goes into the deviation file and the daemon reloads it.
struct Swing: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure the compass's deviation curve with a GNSS swing: turn slowly at a steady speed; the curve and the current are solved and, on confirmation, kept for the daemon.",
        discussion: """
            Turn the vehicle (a boat: in open water, at a steady speed through the water) slowly through two \
            whole circles. The gyroscope tracks the turn, GNSS the velocity over ground; the current (zero on \
            land) is solved with the curve, so that it does not pass for deviation. Progress goes to standard \
            error; the swing stops by itself when every 30° sector holds epochs and two turns are done, or at \
            --duration. Then the curve dev(ψ) = A + B sin ψ + C cos ψ + D sin 2ψ + E cos 2ψ is shown with each \
            coefficient's standard deviation, the current and the residuals, and on confirmation (or --yes) \
            written atomically to calibration.deviation_file, which the daemon is asked to reload. \
            With --log the swing is solved from a data log (or `gpspipe -w` output: NDJSON with ATT and TPV) \
            instead. Exit status 2: the swing was not good enough (the message names what was missing); the \
            deviation curve in force is then unchanged, as it is when the swing is interrupted.
            """)

    @OptionGroup var boardOptions: BoardOptions
    @Option(help: "The agent's UNIX socket (default: socket.path of the config, else the standard path).") var socket: String?
    @Option(help: "Solve from this data log or gpspipe -w output (NDJSON with ATT and TPV) instead of the daemon.") var log: String?
    @Option(help: "Stop collecting after this many seconds.") var duration: Double = 900
    @Option(help: "Slowest speed over ground an epoch may have, m/s.") var minimumSpeed: Double = 1.5
    @Flag(help: "Do not solve a current (on land, or to compare).") var noCurrent = false
    @Option(help: "Write the curve here instead of the daemon's deviation file.") var output: String?
    @Flag(help: "Apply the curve without asking.") var yes = false
    @Flag(help: "Do not write a deviation file.") var noSave = false

    func validate() throws {
        guard duration > 0, duration.isFinite else { throw ValidationError("--duration must be a positive number of seconds") }
        guard minimumSpeed > 0, minimumSpeed.isFinite else { throw ValidationError("--minimum-speed must be a positive number of m/s") }
        if yes && noSave { throw ValidationError("--yes applies the curve; --no-save writes none") }
    }

    func run() throws {
        Syscall.ignoreSIGPIPE()
        let config = try boardOptions.resolve()
        let socketPath = socket ?? config.socket.path
        var limits = SwingLimits()
        limits.minimumSpeed = minimumSpeed
        var collector = SwingCollector(limits: limits)
        if let log {
            try SwingSources.read(log: log, into: &collector)
        } else {
            try SwingSources.collect(socketPath: socketPath, duration: duration, into: &collector)
        }
        let result: SwingResult
        do throws(SwingError) {
            result = try collector.solve(solveCurrent: !noCurrent)
        } catch {
            throw ExitStatus.refused("swing: \(error.message); the deviation curve in force is unchanged")
        }
        print(SwingReport.text(result))
        guard !noSave else { return }
        guard yes || Self.confirm("Apply this curve? [y/N] ") else {
            print("not applied\(isatty(0) == 1 ? "" : " (no terminal to ask on: give --yes)"); the deviation curve in force is unchanged")
            return
        }
        let path = output ?? config.deviationPath
        let record = DeviationRecord(result: result, time: GPSTimestamp.now().iso8601)
        try CalibrationSaving.writeFile(record.encoded(), to: path)
        print("deviation curve written to \(path)")
        if output == nil {
            let reply = CalibrationSaving.askDaemonToReload(socketPath, part: "deviation")
            print(reply.map { "the daemon \($0)" } ?? "the daemon is not running at \(socketPath): it loads the curve when it starts")
        }
    }

    static func confirm(_ question: String) -> Bool {
        guard isatty(0) == 1 else { return false }
        Syscall.printToStandardError(question)
        guard let answer = readLine() else { return false }
        return answer.trimmingWhitespace().lowercased().hasPrefix("y")
    }
}
