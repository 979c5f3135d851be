import BearingSensors
import BearingCalibration
import BearingModel
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The raw samples for a calibration and what came with them, from whichever source.
public struct CalibrationSamples {
    public var raw: [Vector3]
    /// The chip's driver name: from the samples file's header or `--chip`, or from the live samples.
    public var chip: String?
    public var device: String?
    public var units: String?
    /// The daemon's fix, when the samples came from it.
    public var position: Vector3?
    /// `file`, `daemon` or `sensor`.
    public var source: String
    /// The samples file, when they came from one.
    public var file: String?
    /// The daemon connection the samples came over, still open: it is closed after the save.
    public var daemon: DaemonSampleSource?
}

/// Step 1 of `calibrate`: where the samples come from. `--samples FILE`; else the running daemon's raw MAG
/// stream over its socket; else the sensor itself, read by the daemon's own reader. Live samples are
/// collected by a `CollectionSession` that shows the coverage filling up.
public struct CalibrationCollection {
    /// `--samples FILE` and what goes with it.
    public struct FileRequest {
        public var path: String
        public var columns: String?
        public var chip: String?
        public var units: String?

        public init(path: String, columns: String?, chip: String?, units: String?) {
            self.path = path
            self.columns = columns
            self.chip = chip
            self.units = units
        }
    }

    /// Live collection: the daemon at `socketPath` unless `direct`, else the configured sensor.
    public struct LiveRequest {
        public var socketPath: String
        public var direct: Bool
        /// `--bus` was given (a sensor to read even when the config enables none).
        public var busGiven: Bool
        public var magnetometer: MagnetometerConfig
        public var record: String?
        public var timeout: Double
        public var minSamples: Int

        public init(socketPath: String, direct: Bool, busGiven: Bool, magnetometer: MagnetometerConfig, record: String?,
                    timeout: Double, minSamples: Int) {
            self.socketPath = socketPath
            self.direct = direct
            self.busGiven = busGiven
            self.magnetometer = magnetometer
            self.record = record
            self.timeout = timeout
            self.minSamples = minSamples
        }
    }

    public enum Request {
        case file(FileRequest)
        case live(LiveRequest)
    }

    public var request: Request
    public var progress: any CollectionProgress

    public init(request: Request, progress: any CollectionProgress) {
        self.request = request
        self.progress = progress
    }

    /// The samples; `preview` is the calibrator the live display fits with as samples arrive.
    public func collect(preview: MagnetometerCalibrator) throws -> CalibrationSamples {
        switch request {
        case .file(let r): return try read(r)
        case .live(let r): return try collectLive(r, preview: preview)
        }
    }

    public func read(_ r: FileRequest) throws -> CalibrationSamples {
        let file: SampleFile
        do {
            let text = try AtomicFile.readText(r.path, limit: AtomicFile.recordingLimit)
            file = try SampleFile.parse(text, source: r.path, columns: r.columns.map { try SampleFile.ColumnSelection(parsing: $0) } ?? .automatic)
        } catch let e as CalibrationFitError {
            throw CalibrateError(e.message)
        } catch {
            throw CalibrateError("\(r.path): \(error)")
        }
        for example in file.skippedExamples { progress.note("skipped \(example)") }
        return CalibrationSamples(raw: file.samples, chip: r.chip ?? file.metadata["chip"], device: file.metadata["device"],
                                  units: r.units ?? file.metadata["units"], position: nil, source: "file", file: r.path, daemon: nil)
    }

    public func collectLive(_ r: LiveRequest, preview: MagnetometerCalibrator) throws -> CalibrationSamples {
        let recorder: SampleRecorder?
        do { recorder = try r.record.map { try SampleRecorder(path: $0) } } catch { throw CalibrateError("--record: \(error)") }
        let collector = SampleCollector(recorder: recorder)
        var daemon: DaemonSampleSource?
        var sensor: SensorSampleSource?
        let source: String
        if !r.direct, let d = try? DaemonSampleSource(path: r.socketPath) {
            daemon = d
            d.start(into: collector)
            source = "daemon"
        } else {
            guard r.magnetometer.enabled || r.busGiven else {
                throw CalibrateError("no bearing daemon at \(r.socketPath) and no magnetometer configured: give --board, --config or --bus (or --samples FILE)")
            }
            let s = SensorSampleSource(configuration: r.magnetometer.reader, collector: collector)
            sensor = s
            s.start()
            source = "sensor"
        }
        let session = CollectionSession(collector: collector, progress: progress, timeout: r.timeout, minSamples: r.minSamples,
                                        orientation: r.magnetometer.orientation, calibrator: preview)
        session.run()
        sensor?.stop()
        recorder?.close()
        let snap = collector.snapshot
        if let failure = snap.failure, snap.samples.isEmpty { throw CalibrateError(failure) }
        if let failure = recorder?.failure {
            progress.note("--record: \(failure)")
        } else if let record = r.record {
            progress.note("recorded \(snap.samples.count) samples to \(record)")
        }
        return CalibrationSamples(raw: snap.samples, chip: snap.chip, device: snap.device, units: CalibrationRecord.microtesla,
                                  position: snap.position, source: source, file: nil, daemon: daemon)
    }
}

/// The collection loop: refits about once a second, shows coverage and figures, and stops when
/// coverage and quality pass (with at least `minSamples`), on Enter, at the timeout, or when the
/// source fails.
public final class CollectionSession {
    public let collector: SampleCollector
    public let progress: any CollectionProgress
    public let timeout: Double
    public let minSamples: Int
    public let orientation: Orientation
    public let calibrator: MagnetometerCalibrator

    public init(collector: SampleCollector, progress: any CollectionProgress, timeout: Double, minSamples: Int, orientation: Orientation,
         calibrator: MagnetometerCalibrator) {
        self.collector = collector
        self.progress = progress
        self.timeout = timeout
        self.minSamples = minSamples
        self.orientation = orientation
        self.calibrator = calibrator
    }

    public func run() {
        let start = Syscall.monotonicSeconds()
        var enter = EnterKey()
        var lastFit: CalibrationFit?
        var lastFitCount = 0
        var lastDraw = -10.0
        let drawEvery = progress.live ? 0.25 : 2.0
        if progress.live { progress.note("Turn the device slowly through every orientation. Enter finishes now, Ctrl-C aborts.") }
        while true {
            // Enter on stdin (a terminal, or anything else that sends a line) finishes now.
            if enter.pressed(waiting: 200) {
                progress.note("finishing (Enter)")
                return
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
                progress.collecting(samples: snap.samples.count, fit: lastFit, status: snap.status, elapsed: now, timeout: timeout,
                                    orientation: orientation, southern: (snap.position?.x ?? 1) < 0)
                lastDraw = now
            }
            if done {
                progress.note("coverage and quality pass: finishing")
                return
            }
            if now >= timeout {
                progress.note(String(printf: "timeout after %.0f s", timeout))
                return
            }
        }
    }
}
