import ArgumentParser
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
            try Self.read(log: log, into: &collector)
        } else {
            try Self.collect(socketPath: socketPath, duration: duration, into: &collector)
        }
        let result: SwingResult
        do throws(SwingError) {
            result = try collector.solve(solveCurrent: !noCurrent)
        } catch {
            throw ExitStatus.refused("swing: \(error.message); the deviation curve in force is unchanged")
        }
        print(Self.report(result))
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

    /// ATT and TPV lines of a data log (other lines, and lines that are not JSON, are passed over).
    static func read(log path: String, into collector: inout SwingCollector) throws {
        let text: String
        do { text = try AtomicFile.readText(path) } catch { throw ExitStatus.failure("cannot read \(path): \(error)") }
        for line in text.split(separator: "\n") {
            guard let m = try? WireMessage(line: String(line)) else { continue }
            take(m, into: &collector)
        }
    }

    /// Every fused ATT (no smoothing, no throttle) and TPV from the daemon until the swing is complete or
    /// `duration` has passed; progress on standard error.
    static func collect(socketPath: String, duration: Double, into collector: inout SwingCollector) throws {
        let client = BearingClient(.unix(socketPath))
        let change = WatchChange(enable: true, json: true, classes: .some(["ATT", "TPV"]), pipelines: [.att: [], .tpv: []])
        let start = Syscall.monotonicSeconds()
        var told = -Double.infinity
        let live = isatty(2) == 1
        var refusal: String?
        do throws(BearingClientError) {
            try client.connect()
            try client.send(.watch(change))
            while refusal == nil, !collector.isComplete, Syscall.monotonicSeconds() - start < duration {
                if let m = try client.next(timeout: 1) {
                    refusal = m.errorMessage
                    take(m, into: &collector)
                }
                let now = Syscall.monotonicSeconds()
                if now - told >= (live ? 1 : 10) {
                    told = now
                    Syscall.printToStandardError(live ? "\r\u{1B}[K\(collector.progress)" : "\(collector.progress)\n")
                }
            }
        } catch {
            throw ExitStatus.failure("swing: \(error) (is the daemon running at \(socketPath)?)")
        }
        Syscall.printToStandardError("\(live ? "\r\u{1B}[K" : "")\(collector.progress)\n")
        if let refusal { throw ExitStatus.failure("swing: the agent replied: \(refusal)") }
    }

    /// One object into the swing: ATT's compass heading (mheading less the deviation it carries), rate of turn
    /// (°/min) and variation (heading − mheading); TPV's speed, track, eph and eps. Only Bearing's own compass's
    /// ATT (its device `i2c:…`): a GNSS compass's, relayed from gpsd, is another instrument.
    static func take(_ m: WireMessage, into collector: inout SwingCollector) {
        switch m.className {
        case "ATT":
            guard m.string("device")?.hasPrefix("i2c:") == true, let t = m.time?.unixTime, let mheading = m.number("mheading"),
                  let rot = m.number("rot") else { return }
            let variation = m.number("heading").map { SwingSolver.wrap180($0 - mheading) }
            collector.attitude(time: t, compassHeading: mheading - (m.number("deviation") ?? 0), rateOfTurn: rot / 60, variation: variation)
        case "TPV":
            guard let f = m.fix, f.mode >= .twoD, let t = f.time?.unixTime, let speed = f.speed, let track = f.track else { return }
            collector.epoch(time: t, speed: speed, track: track, eph: f.eph, eps: f.eps)
        default:
            return
        }
    }

    static func report(_ r: SwingResult) -> String {
        var lines: [String] = []
        let c = r.curve
        let sigmas = c.uncertainties ?? [Double](repeating: .nan, count: 5)
        lines.append("deviation curve (degrees, east positive; magnetic = compass + deviation):")
        for (name, (value, sigma)) in zip(DeviationCurve.names, zip(c.coefficients, sigmas)) {
            lines.append(String(printf: "  %@ %+7.2f ± %.2f", name, value, sigma))
        }
        lines.append("  compass  " + stride(from: 0, to: 360, by: 30).map { String(printf: "%5d", $0) }.joined())
        lines.append("  dev      " + stride(from: 0, to: 360, by: 30).map { String(printf: "%5.1f", c.deviation(atCompassHeading: Double($0))) }.joined())
        if r.currentSolved {
            lines.append(String(printf: "current %.2f m/s setting %.0f° (east %.2f ± %.2f, north %.2f ± %.2f)", r.currentSpeed, r.currentSet,
                                r.current.east, r.currentSigma.east, r.current.north, r.currentSigma.north))
        } else {
            lines.append("current not solved (--no-current)")
        }
        lines.append(String(printf: "speed through the water %.2f ± %.2f m/s; gyroscope drift %.4f °/s", r.speed, r.speedSigma, r.gyroDrift))
        lines.append(String(printf: "residuals: velocity %.2f m/s RMS, curve %.2f° RMS; %d of %d epochs used, %d of 12 sectors",
                            r.velocityResidual, r.deviationResidual, r.used, r.epochs, r.sectorsCovered))
        if !r.rejected.isEmpty {
            lines.append("set aside: " + r.rejected.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

    static func confirm(_ question: String) -> Bool {
        guard isatty(0) == 1 else { return false }
        Syscall.printToStandardError(question)
        guard let answer = readLine() else { return false }
        return answer.trimmingWhitespace().lowercased().hasPrefix("y")
    }
}
