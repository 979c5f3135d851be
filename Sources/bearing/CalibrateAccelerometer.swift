import ArgumentParser
import BearingTerminal
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
        let model = self.model.flatMap(CalibrationModel.init(rawValue:))

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
                                         timeout: timeout, orientation: config.imu.orientation, model: model)
            collected = session.run()
            recorder?.close()
            if let failure = recorder?.failure {
                progress.note("--record: \(failure)")
            } else if let record {
                progress.note("recorded \(collected.samples) samples to \(record)")
            }
        }
        if collected.samples == 0 { throw CalibrateError("no samples from the accelerometer: \(collected.status)") }
        let fit = try collected.fit(model: model)

        let verdict = CalibrationGrading(noSave: noSave, force: force).verdict(fit, chip: collected.chip, recording: samples)
        var saved: String?
        if case .save(let chip, _) = verdict {
            saved = try CalibrationSaving.write(fit, chip: chip, device: collected.device, to: output ?? config.accelerometerCalibrationPath)
        }
        let daemon = saved == nil ? nil : CalibrationSaving.askDaemonToReload(socketPath, part: "accelerometer")
        AccelerometerReport(fit: fit, collected: collected, orientation: config.imu.orientation, saved: saved, notSaved: verdict.notSaved,
                            daemon: daemon).print(json: json)
        if let status = verdict.failureStatus { throw ExitCode(status) }
    }
}
