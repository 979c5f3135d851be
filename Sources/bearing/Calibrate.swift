import BearingClient
import ArgumentParser
import BearingAgent
import BearingCore
import BearingIO
import Foundation
#if canImport(Glibc)
import Glibc
#endif

struct Calibrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Hard- and soft-iron calibration of the magnetometer: collect, fit, grade, save.",
        discussion: """
            Samples come from the running daemon's raw MAG stream (it owns the bus), else straight from the \
            sensor of the board/config given, else from --samples FILE. Turn the device slowly through every \
            orientation while the coverage map fills; it stops by itself when coverage and quality pass, on \
            Enter, or at --timeout. The result is written atomically to the calibration file the daemon \
            loads (default $STATE_DIRECTORY/calibration.json or /var/lib/bearing/calibration.json) and the \
            daemon is asked to reload it.
            """)

    @OptionGroup var boardOptions: BoardOptions
    @Option(help: "The agent's UNIX socket (default: socket.path of the config, else the standard path).") var socket: String?
    @Option(help: "Read the sensor on this bus instead of the config's (/dev/i2c-N, a number, simulator, simulator:tumble).") var bus: String?
    @Flag(help: "Read the sensor directly even when the daemon is running.") var direct = false
    @Option(help: "Calibrate from this file of raw samples (CSV or whitespace-separated x y z; header lines allowed).") var samples: String?
    @Option(help: "With --samples: the three columns to read, by number (4,5,6) or header name (mx,my,mz).") var columns: String?
    @Option(help: "With --samples: the samples' units; uT makes the result loadable by the daemon (bearing recordings say so themselves).") var units: String?
    @Option(help: "With --samples: the chip the samples came from (bearing recordings name it).") var chip: String?
    @Option(help: "Save the raw samples collected to this file (CSV, µT, chip axes).") var record: String?
    @Option(help: "Stop collecting after this many seconds.") var timeout: Double = 180
    @Option(help: "Fewest samples before stopping by itself.") var minSamples: Int = 300
    @Option(help: "Latitude,longitude[,height km] for the WMM field (default: the daemon's fix, else heading.fallback_position).") var position: String?
    @Option(help: "Scale to this field magnitude (µT) instead of the WMM's.") var field: Double?
    @Option(help: "Fit this model only: ellipsoid, axes, sphere or planar.") var model: String?
    @Option(help: "Write the calibration here instead of the daemon's calibration file.") var output: String?
    @Flag(help: "Do not write a calibration file.") var noSave = false
    @Flag(help: "Save even when a figure misses the bar or only a 2-D fit was possible.") var force = false
    @Flag(help: "Print the result and figures as one JSON object (progress goes to stderr).") var json = false
    @Flag(help: "Plain progress lines even on a terminal.") var plain = false

    func validate() throws {
        if samples != nil && record != nil { throw ValidationError("--record saves live samples; with --samples they are already in a file") }
        if samples == nil && (columns != nil || units != nil) { throw ValidationError("--columns and --units go with --samples") }
        if let columns { do { _ = try SampleFile.ColumnSelection(parsing: columns) } catch { throw ValidationError(error.message) } }
        guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout must be a positive number of seconds") }
        guard minSamples >= 20 else { throw ValidationError("--min-samples must be at least 20") }
        if let field, !(field > 0 && field.isFinite) { throw ValidationError("--field must be a positive number of µT") }
        if let model, CalibrationModel(rawValue: model) == nil {
            throw ValidationError("--model \(model): allowed: \(CalibrationModel.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let position, Self.parsePosition(position) == nil {
            throw ValidationError("--position \(position): expected latitude,longitude[,height km], e.g. 52.1,4.3 or -33.9,151.2,0.05")
        }
        if let bus, I2CBusName.path(bus) == nil {
            throw ValidationError("--bus \(bus): expected a bus device such as /dev/i2c-1, a bus number, simulator or simulator:tumble")
        }
    }

    static func parsePosition(_ text: String) -> Vector3? {
        let parts = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard (2...3).contains(parts.count), parts.allSatisfy({ $0 != nil }) else { return nil }
        let p = Vector3(parts[0]!, parts[1]!, parts.count == 3 ? parts[2]! : 0)
        guard abs(p.x) <= 90, abs(p.y) <= 360, p.z > -1, p.z < 100 else { return nil }
        return p
    }

    func run() throws {
        Syscall.ignoreSIGPIPE()
        var config = try boardOptions.resolve()
        if let bus { config.magnetometer.reader.bus = I2CBusName.path(bus)! }
        let socketPath = socket ?? config.socket.path
        let progress = Progress(json: json, plain: plain)

        // 1. Samples.
        var raw: [Vector3]
        var chipName = chip
        var device: String?
        var sampleUnits = units
        var collectedPosition: Vector3?
        let sourceName: String
        var daemon: DaemonSampleSource?
        if let samples {
            let file: SampleFile
            do {
                let text = try String(contentsOfFile: samples, encoding: .utf8)
                file = try SampleFile.parse(text, source: samples, columns: columns.map { try SampleFile.ColumnSelection(parsing: $0) } ?? .automatic)
            } catch let e as CalibrationFitError {
                throw CalibrateError(e.message)
            } catch {
                throw CalibrateError("\(samples): \(error.localizedDescription)")
            }
            for example in file.skippedExamples { progress.note("skipped \(example)") }
            raw = file.samples
            chipName = chipName ?? file.metadata["chip"]
            device = file.metadata["device"]
            sampleUnits = sampleUnits ?? file.metadata["units"]
            sourceName = "file"
        } else {
            let recorder: SampleRecorder?
            do { recorder = try record.map { try SampleRecorder(path: $0) } } catch { throw CalibrateError("--record: \(error)") }
            let collector = SampleCollector(recorder: recorder)
            var sensor: SensorSampleSource?
            if !direct, let d = try? DaemonSampleSource(path: socketPath) {
                daemon = d
                d.start(into: collector)
                sourceName = "daemon"
            } else {
                guard config.magnetometer.enabled || bus != nil else {
                    throw CalibrateError("no bearing daemon at \(socketPath) and no magnetometer configured: give --board, --config or --bus (or --samples FILE)")
                }
                let s = SensorSampleSource(configuration: config.magnetometer.reader, collector: collector)
                sensor = s
                s.start()
                sourceName = "sensor"
            }
            let session = CollectionSession(collector: collector, progress: progress, timeout: timeout, minSamples: minSamples,
                                            orientation: config.magnetometer.orientation, calibrator: calibrator(config: config, position: nil, microtesla: true))
            session.run()
            sensor?.stop()
            recorder?.close()
            let snap = collector.snapshot
            if let failure = snap.failure, snap.samples.isEmpty { throw CalibrateError(failure) }
            raw = snap.samples
            chipName = snap.chip
            device = snap.device
            sampleUnits = CalibrationRecord.microtesla
            collectedPosition = snap.position
            if let failure = recorder?.failure {
                progress.note("--record: \(failure)")
            } else if let record {
                progress.note("recorded \(raw.count) samples to \(record)")
            }
        }

        // 2. The fit.
        let where_ = position.flatMap(Self.parsePosition) ?? collectedPosition ?? config.heading.fallbackPosition
        let calibrator = calibrator(config: config, position: where_, microtesla: sampleUnits == CalibrationRecord.microtesla)
        let fit: CalibrationFit
        do { fit = try calibrator.fit(raw) } catch { throw CalibrateError(error.message) }
        let fieldSource = field != nil ? "given" : (calibrator.options.field != nil ? "wmm" : "fit")

        // 3. Save.
        let target = output ?? config.calibrationPath
        var saved: String?
        var notSaved: String?
        var refused = false
        if noSave {
            notSaved = "--no-save"
        } else if fit.model == .planar && !force {
            notSaved = "only a 2-D fit was possible (the device was turned flat); tilt and roll it and try again, or --force"
            refused = true
        } else if !fit.figures.passes && !force {
            notSaved = "the fit misses the bar (\(fit.figures.failures.joined(separator: ", "))); collect more orientations, or --force"
            refused = true
        } else if chipName == nil {
            notSaved = "the chip is unknown; give --chip NAME"
        } else if sampleUnits != CalibrationRecord.microtesla {
            notSaved = "the samples' units are unknown (the daemon works in µT); give --units uT if they are µT"
        } else {
            let record = CalibrationRecord(fit: fit, chip: chipName!, device: device, units: sampleUnits!, fieldSource: fieldSource,
                                           position: where_.map { [$0.x, $0.y, $0.z] }, time: GPSTimestamp.now())
            do throws(SystemError) {
                try AtomicFile.write(Array(record.encoded()), to: target)
            } catch {
                throw CalibrateError("cannot write \(target): \(error)\(error.errno == EACCES ? " (run as root or as the bearing user, or give --output)" : "")")
            }
            saved = target
        }

        // 4. Tell the daemon.
        daemon?.stop()
        let daemonReply = saved == nil ? nil : Self.askDaemonToReload(socketPath)

        // 5. Report.
        if json {
            print(Self.json(fit, chip: chipName, device: device, units: sampleUnits, fieldSource: fieldSource, source: sourceName,
                            saved: saved, notSaved: notSaved, daemon: daemonReply))
        } else {
            print(Self.summary(fit, chip: chipName, units: sampleUnits, fieldSource: fieldSource, position: where_))
            if let saved { print("saved \(saved)" + (daemonReply.map { "; daemon: \($0)" } ?? "")) }
            if let notSaved { print("not saved: \(notSaved)") }
        }
        if refused { throw ExitCode(2) }
    }

    /// The calibrator for these options; the WMM field (µT) is the target only for samples in µT.
    func calibrator(config: AgentConfig, position: Vector3?, microtesla: Bool) -> MagnetometerCalibrator {
        var options = MagnetometerCalibrator.Options(model: model.flatMap(CalibrationModel.init(rawValue:)))
        options.down = config.magnetometer.orientation.matrix.transposed * Vector3(0, 0, 1)
        if let position {
            let year = WorldMagneticModel.decimalYear(unixSeconds: GPSTimestamp.now().unixTime)
            let f = WorldMagneticModel.wmm2025.field(latitude: position.x, longitude: position.y, heightKm: position.z, year: year)
            options.inclination = f.inclination
            if microtesla { options.field = f.totalIntensity / 1000 }
        }
        if let field { options.field = field }
        return MagnetometerCalibrator(options: options)
    }

    /// Sends `?CALIBRATION={"reload":true};` and returns what the daemon said, or nil when none runs.
    static func askDaemonToReload(_ path: String) -> String? {
        let client = BearingClient(.unix(path))
        do throws(BearingClientError) {
            try client.connect()
        } catch {
            return nil
        }
        do throws(BearingClientError) {
            let m = try client.request(.calibration(reload: true), expecting: "CALIBRATION")
            return "reloaded, calibration \(m.string("status") ?? "?") (\(m.string("file") ?? "?"))"
        } catch {
            if case .refused(_, let message) = error { return "rejected it: \(message)" }
            if case .timeout = error { return "no reply within 5 s" }
            return "no reply"
        }
    }

    /// The `--json` object. Encoded with JSONEncoder, which writes the shortest digits that read back
    /// exactly (JSONSerialization rounds to 15).
    struct Result: Encodable {
        struct Figures: Encodable {
            var gaps, variance, wobble: Double
            var fit_error: Double
            var heading_error: Double?
            var regions: Int
        }
        var `class` = "CALIBRATION_RESULT"
        var model: String
        var offset: [Double]
        var matrix: [[Double]]
        var field: Double
        var field_source: String
        var units, chip, device: String?
        var source: String
        var samples, used, outliers: Int
        var radii: [Double]
        var figures: Figures
        var passes: Bool
        var failures, warnings: [String]
        var saved, not_saved, daemon: String?

        func encode(to encoder: Encoder) throws {
            // Optional keys are written as null, not left out: a script can rely on every key.
            enum K: String, CodingKey {
                case `class`, model, offset, matrix, field, field_source, units, chip, device, source, samples, used, outliers
                case radii, figures, passes, failures, warnings, saved, not_saved, daemon
            }
            var c = encoder.container(keyedBy: K.self)
            try c.encode(self.class, forKey: .class)
            try c.encode(model, forKey: .model)
            try c.encode(offset, forKey: .offset)
            try c.encode(matrix, forKey: .matrix)
            try c.encode(field, forKey: .field)
            try c.encode(field_source, forKey: .field_source)
            try c.encode(units, forKey: .units)
            try c.encode(chip, forKey: .chip)
            try c.encode(device, forKey: .device)
            try c.encode(source, forKey: .source)
            try c.encode(samples, forKey: .samples)
            try c.encode(used, forKey: .used)
            try c.encode(outliers, forKey: .outliers)
            try c.encode(radii, forKey: .radii)
            try c.encode(figures, forKey: .figures)
            try c.encode(passes, forKey: .passes)
            try c.encode(failures, forKey: .failures)
            try c.encode(warnings, forKey: .warnings)
            try c.encode(saved, forKey: .saved)
            try c.encode(not_saved, forKey: .not_saved)
            try c.encode(daemon, forKey: .daemon)
        }
    }

    static func json(_ fit: CalibrationFit, chip: String?, device: String?, units: String?, fieldSource: String, source: String,
                     saved: String?, notSaved: String?, daemon: String?) -> String {
        let c = fit.calibration
        let f = fit.figures
        let result = Result(
            model: fit.model.rawValue, offset: [c.offset.x, c.offset.y, c.offset.z], matrix: c.matrix.rows.map { [$0.x, $0.y, $0.z] },
            field: fit.field, field_source: fieldSource, units: units, chip: chip, device: device, source: source,
            samples: fit.samples, used: fit.used, outliers: fit.outliers, radii: fit.radii,
            figures: .init(gaps: f.gaps, variance: f.variance, wobble: f.wobble, fit_error: f.fitError,
                           heading_error: f.headingError.isFinite ? f.headingError : nil, regions: f.regionsCovered),
            passes: f.passes, failures: f.failures, warnings: fit.warnings, saved: saved, not_saved: notSaved, daemon: daemon)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(result)) ?? Data("{}".utf8), as: UTF8.self)
    }

    static func summary(_ fit: CalibrationFit, chip: String?, units: String?, fieldSource: String, position: Vector3?) -> String {
        let u = units == CalibrationRecord.microtesla ? " µT" : (units.map { " \($0)" } ?? "")
        let c = fit.calibration
        var lines: [String] = []
        lines.append("calibration: \(fit.model.rawValue) fit to \(fit.used) of \(fit.samples) samples (\(fit.outliers) outliers)" + (chip.map { ", chip \($0)" } ?? ""))
        lines.append(String(format: "  offset  (%.4g, %.4g, %.4g)%@", c.offset.x, c.offset.y, c.offset.z, u))
        for (i, r) in c.matrix.rows.enumerated() {
            lines.append(String(format: "  %@  [%9.5g %9.5g %9.5g]", i == 0 ? "matrix" : "      ", r.x, r.y, r.z))
        }
        let fieldText: String
        switch fieldSource {
        case "wmm": fieldText = position.map { String(format: "WMM2025 at %.4f, %.4f", $0.x, $0.y) } ?? "WMM2025"
        case "given": fieldText = "--field"
        default: fieldText = units == CalibrationRecord.microtesla ? "the fitted radius; give --position for the WMM field" : "the fitted radius, in the samples' units"
        }
        lines.append(String(format: "  field   %.4g%@ (%@)", fit.field, u, fieldText))
        lines.append("  " + Progress.figures(fit.figures))
        for w in fit.warnings { lines.append("  warning: \(w)") }
        return lines.joined(separator: "\n")
    }
}

struct CalibrateError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// Where progress goes: the terminal (redrawn in place), or plain lines when not a terminal. With
/// --json it goes to stderr, leaving stdout to the JSON object.
final class Progress {
    let stream: UnsafeMutablePointer<FILE>
    let live: Bool
    private var drawn = 0

    init(json: Bool, plain: Bool) {
        stream = json ? stderr : stdout
        live = !plain && isatty(fileno(stream)) == 1
    }

    func note(_ text: String) {
        fputs(text + "\n", stream)
        fflush(stream)
    }

    /// Replaces the previous frame (terminal) or prints one line (plain).
    func frame(_ lines: [String], plainLine: String) {
        if live {
            var out = drawn > 0 ? "\u{1B}[\(drawn)A\u{1B}[J" : ""
            out += lines.joined(separator: "\n") + "\n"
            fputs(out, stream)
            drawn = lines.count
        } else {
            fputs(plainLine + "\n", stream)
        }
        fflush(stream)
    }

    static func figures(_ f: CalibrationFigures) -> String {
        func mark(_ ok: Bool) -> String { ok ? "✓" : "✗" }
        let heading = f.headingError.isFinite ? String(format: "≈%.2f°", f.headingError) : "n/a (too few samples)"
        return String(format: "gaps %.1f %@  variance %.2f%% %@  wobble %.2f%% %@  fit error %.2f%% %@  heading error %@",
                      f.gaps, mark(f.gaps < CalibrationFigures.maximumGaps), f.variance, mark(f.variance < CalibrationFigures.maximumVariance),
                      f.wobble, mark(f.wobble < CalibrationFigures.maximumWobble), f.fitError, mark(f.fitError < CalibrationFigures.maximumFitError),
                      heading)
    }
}

/// The collection loop: refits about once a second, draws coverage and figures, and stops when
/// coverage and quality pass (with at least `minSamples`), on Enter, at the timeout, or when the
/// source fails.
final class CollectionSession {
    let collector: SampleCollector
    let progress: Progress
    let timeout: Double
    let minSamples: Int
    let orientation: Orientation
    let calibrator: MagnetometerCalibrator

    init(collector: SampleCollector, progress: Progress, timeout: Double, minSamples: Int, orientation: Orientation,
         calibrator: MagnetometerCalibrator) {
        self.collector = collector
        self.progress = progress
        self.timeout = timeout
        self.minSamples = minSamples
        self.orientation = orientation
        self.calibrator = calibrator
    }

    func run() {
        let start = Syscall.monotonicSeconds()
        var stdinOpen = true
        var lastFit: CalibrationFit?
        var lastFitCount = 0
        var lastDraw = -10.0
        let drawEvery = progress.live ? 0.25 : 2.0
        if progress.live { progress.note("Turn the device slowly through every orientation. Enter finishes now, Ctrl-C aborts.") }
        while true {
            // Enter on stdin (a terminal, or anything else that sends a line) finishes now.
            var pfd = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            if stdinOpen, poll(&pfd, 1, 200) > 0 {
                var buf = [UInt8](repeating: 0, count: 256)
                let n = buf.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if n <= 0 { stdinOpen = false } else if buf[0..<n].contains(UInt8(ascii: "\n")) {
                    progress.note("finishing (Enter)")
                    return
                }
            } else if !stdinOpen {
                usleep(200_000)
            }
            let now = Syscall.monotonicSeconds() - start
            let snap = collector.snapshot
            if let failure = snap.failure {
                progress.note("stopped: \(failure)")
                return
            }
            if snap.samples.count >= 30 && snap.samples.count - lastFitCount >= max(10, snap.samples.count / 20) {
                lastFit = try? calibrator.fit(snap.samples)
                lastFitCount = snap.samples.count
            }
            let done = lastFit.map { $0.model == .ellipsoid && $0.figures.passes && snap.samples.count >= minSamples } ?? false
            if now - lastDraw >= drawEvery || done {
                draw(snap.samples.count, fit: lastFit, status: snap.status, elapsed: now, southern: (snap.position?.x ?? 1) < 0)
                lastDraw = now
            }
            if done {
                progress.note("coverage and quality pass: finishing")
                return
            }
            if now >= timeout {
                progress.note(String(format: "timeout after %.0f s", timeout))
                return
            }
        }
    }

    func draw(_ count: Int, fit: CalibrationFit?, status: String, elapsed: Double, southern: Bool) {
        let counts = fit?.regionCounts ?? Array(repeating: 0, count: SphereRegions.count)
        let covered = counts.filter { $0 >= 3 }.count
        let hint = fit == nil ? "turn it slowly through a full circle, then tilt and roll it" :
            CalibrationGuide.hint(regionCounts: counts, orientation: orientation, southernHemisphere: southern)
        let figures = fit.map { Progress.figures($0.figures) + " (\($0.model.rawValue))" } ?? "figures after 30 samples"
        var lines = ["\(status)",
                     "coverage \(CalibrationGuide.bar(Double(covered), total: 100)) \(covered)/100 regions  \(count) samples  \(Int(elapsed)) s of \(Int(timeout))"]
        lines += CalibrationGuide.map(regionCounts: counts)
        lines.append(figures)
        lines.append("hint: \(hint)")
        let plain = String(format: "%4.0f s  %d samples  regions %d/100  ", elapsed, count, covered) + figures + "  hint: \(hint)"
        progress.frame(lines, plainLine: plain)
    }
}
