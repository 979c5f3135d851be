import ArgumentParser
import BearingTerminal
import BearingCalibrationWorkflow
import BearingDaemon
import BearingCalibration
import BearingModel
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

struct Calibrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Calibrate the magnetometer (hard and soft iron) or, with --accel, the accelerometer: collect, fit, grade, save.",
        discussion: """
            Samples come from the running daemon's raw MAG stream (it owns the bus), else straight from the \
            sensor of the board/config given, else from --samples FILE. Turn the device slowly through every \
            orientation while the coverage map fills; it stops by itself when coverage and quality pass, on \
            Enter, or at --timeout. The result is written atomically to the calibration file the daemon \
            loads (default $STATE_DIRECTORY/calibration.json or /var/lib/bearing/calibration.json) and the \
            daemon is asked to reload it. \
            With --accel the accelerometer is calibrated instead (offset, gains and, with tilted poses, \
            misalignment): hold the board still for a second or two with each face up in turn (and tilts \
            between them for the full model). Poses come straight from the IMU (the daemon must be stopped, \
            or give --direct) or from --samples FILE, an IMU recording (CSV t,acc_x,acc_y,acc_z and optionally \
            gyr_x,gyr_y,gyr_z: s, m/s², rad/s, chip axes), as --record writes one. The file goes beside the \
            magnetometer's (accelerometer.json, or imu.calibration). Exit status 2: the fit misses the bar \
            (a direction never held, a residual too large, an implausible correction), unless --force.
            """)

    @OptionGroup var boardOptions: BoardOptions
    @OptionGroup var source: SensorSourceOptions
    @Flag(help: "Calibrate the accelerometer instead, from still poses (--model axes or ellipsoid).") var accel = false
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
        if accel {
            if let first = magnetometerOnlyOptions.first { throw ValidationError("\(first) is for the magnetometer; it does not go with --accel") }
            if let model, model != CalibrationModel.axes.rawValue && model != CalibrationModel.ellipsoid.rawValue {
                throw ValidationError("--model \(model): with --accel, allowed: axes, ellipsoid")
            }
        }
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
    }

    static func parsePosition(_ text: String) -> Vector3? {
        let parts = text.split(separator: ",").map { Double($0.trimmingWhitespace()) }
        guard (2...3).contains(parts.count), parts.allSatisfy({ $0 != nil }) else { return nil }
        let p = Vector3(parts[0]!, parts[1]!, parts.count == 3 ? parts[2]! : 0)
        guard abs(p.x) <= 90, abs(p.y) <= 360, p.z > -1, p.z < 100 else { return nil }
        return p
    }

    /// Collect, fit, grade, save, report: each step in its own type (`CalibrationCollection`,
    /// `CalibrationFitting`, `CalibrationGrading`, `CalibrationSaving`, `CalibrationReport`).
    func run() throws {
        if accel { return try runAccelerometer() }
        Syscall.ignoreSIGPIPE()
        var config = try boardOptions.resolve()
        if let bus = source.busPath { config.magnetometer.reader.bus = bus }
        let socketPath = source.socketPath(config)
        let progress = Progress(json: json, plain: plain)
        let fitting = CalibrationFitting(model: model.flatMap(CalibrationModel.init(rawValue:)), field: field,
                                         position: position.flatMap(Self.parsePosition), heading: config.heading,
                                         orientation: config.magnetometer.orientation)

        let samples = try CalibrationCollection(request: collectionRequest(config: config, socketPath: socketPath), progress: progress)
            .collect(preview: fitting.preview)
        let fitted = try fitting.fit(samples)
        let verdict = CalibrationGrading(noSave: noSave, force: force).verdict(fitted, samples)
        var saved: String?
        if case .save(let chip, let units) = verdict {
            saved = try CalibrationSaving.write(fitted, samples, chip: chip, units: units, to: output ?? config.calibrationPath)
        }
        samples.daemon?.stop()
        let daemonReply = saved == nil ? nil : CalibrationSaving.askDaemonToReload(socketPath)
        CalibrationReport(fitted: fitted, samples: samples, saved: saved, notSaved: verdict.notSaved, daemon: daemonReply).print(json: json)
        if let status = verdict.failureStatus { throw ExitCode(status) }
    }

    /// `--samples FILE`, else live samples from the daemon or the sensor.
    func collectionRequest(config: AgentConfig, socketPath: String) -> CalibrationCollection.Request {
        if let samples {
            return .file(.init(path: samples, columns: columns, chip: chip, units: units))
        }
        return .live(.init(socketPath: socketPath, direct: source.direct, busGiven: source.bus != nil, magnetometer: config.magnetometer,
                           record: record, timeout: timeout, minSamples: minSamples))
    }
}

