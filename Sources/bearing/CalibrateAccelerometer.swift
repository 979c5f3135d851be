import ArgumentParser
import BearingCalibrationWorkflow
import BearingSensors
import BearingCalibration
import BearingModel
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// `bearing calibrate --accel`: still poses from a recording or straight from the IMU, the fit
/// (`AccelerometerCalibrator`), the grading, the file beside the magnetometer's, the daemon asked to reload.
extension Calibrate {
    /// The options that belong to the magnetometer alone.
    var magnetometerOnlyOptions: [String] {
        [columns.map { _ in "--columns" }, units.map { _ in "--units" }, position.map { _ in "--position" }, field.map { _ in "--field" }]
            .compactMap { $0 }
    }

    func runAccelerometer() throws {
        Syscall.ignoreSIGPIPE()
        let config = try boardOptions.resolve()
        let socketPath = source.socketPath(config)
        let progress = Progress(json: json, plain: plain)
        let calibrator = AccelerometerCalibrator(model: model.flatMap(CalibrationModel.init(rawValue:)))

        let collected: PoseCollection.Result
        if let samples {
            collected = try PoseCollection.read(samples, chip: chip, progress: progress)
        } else {
            if !source.direct && InertialInput.daemonAnswers(at: socketPath) {
                throw CalibrateError("""
                    the bearing daemon at \(socketPath) owns the IMU and publishes no raw accelerometer samples: \
                    stop it (sudo systemctl stop bearing) and run this again, or give --direct to read the chip beside it
                    """)
            }
            let recorder: SampleRecorder?
            do { recorder = try record.map { try SampleRecorder(path: $0) } } catch { throw CalibrateError("--record: \(error)") }
            let session = PoseCollection(reader: try InertialInput.reader(config.imu, bus: source.busPath), recorder: recorder, progress: progress,
                                         timeout: timeout, orientation: config.imu.orientation, calibrator: calibrator)
            collected = session.run()
            recorder?.close()
            if let failure = recorder?.failure {
                progress.note("--record: \(failure)")
            } else if let record {
                progress.note("recorded \(collected.samples) samples to \(record)")
            }
        }
        if collected.samples == 0 { throw CalibrateError("no samples from the accelerometer: \(collected.status)") }
        let fit: AccelerometerFit
        do { fit = try calibrator.fit(collected.poses) } catch { throw CalibrateError(error.message) }

        let verdict: CalibrationVerdict
        if noSave {
            verdict = .skip("--no-save")
        } else if !fit.passes && !force {
            verdict = .refuse("the fit misses the bar (\(fit.failures.joined(separator: "; "))); hold the board stiller or in more poses, or --force",
                              status: CalibrationGrading.belowTheBar)
        } else if let chip = collected.chip {
            verdict = .save(chip: chip, units: AccelerometerCalibrationRecord.metresPerSecondSquared)
        } else {
            verdict = .refuse("the chip is unknown (\(samples ?? "the recording") has no \"\(SampleFile.recordingMarker) chip=…\" line); give --chip NAME",
                              status: CalibrationGrading.cannotSave)
        }
        var saved: String?
        if case .save(let chip, _) = verdict {
            let target = output ?? config.accelerometerCalibrationPath
            let record = AccelerometerCalibrationRecord(fit: fit, chip: chip, device: collected.device, time: GPSTimestamp.now())
            try CalibrationSaving.writeFile(record.encoded(), to: target)
            saved = target
        }
        let daemon = saved == nil ? nil : CalibrationSaving.askDaemonToReload(socketPath, part: "accelerometer")
        AccelerometerReport(fit: fit, collected: collected, orientation: config.imu.orientation, saved: saved, notSaved: verdict.notSaved,
                            daemon: daemon).print(json: json)
        if let status = verdict.failureStatus { throw ExitCode(status) }
    }
}

/// The still poses for an accelerometer calibration, from a recording or live from the IMU. Live, it shows
/// which of the six directions are done, whether the board is being held still, and which way to turn it
/// next; it stops when the fit passes with every direction held (and the model asked for, if any), on
/// Enter, or at the timeout.
final class PoseCollection {
    struct Result {
        var poses: [StaticPose]
        var samples: Int
        var chip: String?
        var device: String?
        /// `file` or `sensor`.
        var source: String
        /// What the source last said (why there were no samples, if there were none).
        var status = ""
    }

    /// The poses of a recording.
    static func read(_ path: String, chip: String?, progress: Progress) throws -> Result {
        let file = try InertialInput.read(path)
        var detector = StaticPoseDetector()
        for s in file.samples {
            detector.add(time: s.time, specificForce: s.accelerometer, angularRate: file.hasGyroscope ? s.gyroscope : nil)
        }
        detector.finish()
        progress.note("\(path): \(file.samples.count) samples, \(detector.poses.count) still poses" + (file.hasGyroscope ? "" : " (accelerometer only)"))
        return Result(poses: detector.poses, samples: file.samples.count, chip: chip ?? file.metadata["chip"], device: file.metadata["device"],
                      source: "file")
    }

    let reader: InertialReader.Configuration
    let recorder: SampleRecorder?
    let progress: Progress
    let timeout: Double
    let orientation: Orientation
    let calibrator: AccelerometerCalibrator

    init(reader: InertialReader.Configuration, recorder: SampleRecorder?, progress: Progress, timeout: Double, orientation: Orientation,
         calibrator: AccelerometerCalibrator) {
        self.reader = reader
        self.recorder = recorder
        self.progress = progress
        self.timeout = timeout
        self.orientation = orientation
        self.calibrator = calibrator
    }

    func run() -> Result {
        let buffer = InertialSampleBuffer(recorder: recorder)
        let sensor = InertialSensorSource(configuration: reader, buffer: buffer)
        sensor.start()
        defer { sensor.stop() }
        var detector = StaticPoseDetector()
        var enter = EnterKey()
        var count = 0
        var chip: String?, device: String?
        var held: [AxisDirection?] = []
        var lastStatus = ""
        var lastDraw = -10.0
        let drawEvery = progress.live ? 0.25 : 2.0
        let start = Syscall.monotonicSeconds()
        progress.note("Hold the board still for a second or two in each pose: each face up in turn (and tilts between them for the full model). Enter finishes now, Ctrl-C aborts.")
        func result() -> Result { Result(poses: detector.poses, samples: count, chip: chip, device: device, source: "sensor", status: lastStatus) }
        while true {
            if enter.pressed(waiting: 100) {
                progress.note("finishing (Enter)")
                detector.finish()
                return result()
            }
            let now = Syscall.monotonicSeconds() - start
            let (samples, status, failure) = buffer.take()
            lastStatus = status
            if let failure {
                progress.note("stopped: \(failure)")
                return result()
            }
            var newPose = false
            for s in samples {
                count += 1
                chip = s.chip
                device = s.device
                if let pose = detector.add(time: s.time.unixTime, specificForce: s.acceleration, angularRate: s.angularRate) {
                    held.append(AxisDirection(pointing: pose.specificForce))
                    newPose = true
                    if !progress.live { progress.note(Self.describe(pose, number: detector.poses.count, direction: held.last!)) }
                }
            }
            let fit = newPose ? try? calibrator.fit(detector.poses) : nil
            let done = fit.map { $0.passes && $0.figures.missing.isEmpty && (calibrator.model == nil || $0.model == calibrator.model) } ?? false
            if now - lastDraw >= drawEvery || done || newPose {
                frame(status: status, held: held, holding: detector.holding, last: detector.poses.last, elapsed: now)
                lastDraw = now
            }
            if done {
                progress.note("every direction held and the fit passes: finishing")
                return result()
            }
            if now >= timeout {
                progress.note(String(printf: "timeout after %.0f s", timeout))
                detector.finish()
                return result()
            }
        }
    }

    /// One frame: status, the six directions, "hold still" feedback, the last pose, a hint.
    func frame(status: String, held: [AxisDirection?], holding: StaticPose?, last: StaticPose?, elapsed: Double) {
        let done = Set(held.compactMap { $0 })
        let directions = AxisDirection.allCases.map { "\($0.rawValue) \(done.contains($0) ? "✓" : "·")" }.joined(separator: "  ")
        let still: String
        if let h = holding, h.duration > 0.2 {
            still = h.duration >= 1 ? String(printf: "still %.1f s ✓ (turn it to the next pose)", h.duration)
                : String(printf: "hold still… %.1f s", h.duration)
        } else {
            still = "moving"
        }
        let next = AxisDirection.allCases.filter { !done.contains($0) }.min { $0.postureRank(orientation) < $1.postureRank(orientation) }
        let hint = next.map { "hold it \($0.posture(orientation)) (\($0.rawValue) up), still" }
            ?? "all six faces held; tilt it about 45° between two faces and hold it still, for the full model (or Enter)"
        var lines = [status, "poses \(held.count)   \(directions)   \(Int(elapsed)) s of \(Int(timeout))", still]
        if let last { lines.append("last: " + Self.describe(last, number: held.count, direction: held.last ?? nil)) }
        lines.append("hint: \(hint)")
        progress.frame(lines, plainLine: String(printf: "%4.0f s  poses %d  ", elapsed, held.count) + "\(directions)  \(still)  hint: \(hint)")
    }

    static func describe(_ pose: StaticPose, number: Int, direction: AxisDirection?) -> String {
        String(printf: "pose %d %@ held %.1f s, |a| %.4f m/s²", number, direction?.rawValue ?? "tilted", pose.duration, pose.specificForce.length)
    }
}
