import BearingCalibration
import BearingModel
import BearingPOSIX
import FoundationEssentials

/// `calibrate --accel` and `level` take the magnetometer's path after collection: fit, grade (one rule:
/// `--no-save` skips, a fit below the bar is refused unless forced, an unknown chip cannot be saved), save
/// atomically, ask the daemon to reload.
extension PoseCollection.Result {
    /// The accelerometer fit of these poses (`model` nil: the best they support).
    public func fit(model: CalibrationModel?) throws -> AccelerometerFit {
        do { return try AccelerometerCalibrator(model: model).fit(poses) } catch { throw CalibrateError(error.message) }
    }
}

extension CalibrationGrading {
    /// The verdict on an accelerometer fit of `chip`'s poses (`recording`: the file they came from, for the message).
    public func verdict(_ fit: AccelerometerFit, chip: String?, recording: String?) -> CalibrationVerdict {
        if noSave { return .skip("--no-save") }
        if !fit.passes && !force {
            return .refuse("the fit misses the bar (\(fit.failures.joined(separator: "; "))); hold the board stiller or in more poses, or --force",
                           status: Self.belowTheBar)
        }
        guard let chip else {
            return .refuse("the chip is unknown (\(recording ?? "the recording") has no \"\(SampleFile.recordingMarker) chip=…\" line); give --chip NAME",
                           status: Self.cannotSave)
        }
        return .save(chip: chip, units: AccelerometerCalibrationRecord.metresPerSecondSquared)
    }
}

extension CalibrationSaving {
    /// Writes an accelerometer fit as the daemon reads it, to `target`; returns `target`.
    public static func write(_ fit: AccelerometerFit, chip: String, device: String?, to target: String) throws -> String {
        let record = AccelerometerCalibrationRecord(fit: fit, chip: chip, device: device, time: GPSTimestamp.now())
        try writeFile(record.encoded(), to: target)
        return target
    }
}

/// `bearing level` after the measurement: the warnings on it, and the level saved unless refused or skipped.
public struct LevelFinishing {
    public var force: Bool
    public var noSave: Bool
    public init(force: Bool, noSave: Bool) {
        self.force = force
        self.noSave = noSave
    }

    /// What a user should know about a measurement: an uncalibrated accelerometer, |f| off g by more than 2 %.
    public static func warnings(_ input: LevelInput, pose: StaticPose) -> [String] {
        var warnings: [String] = []
        if input.accelerometerCalibration == nil {
            warnings.append("the accelerometer is uncalibrated: its offset (tens of mg) reads as up to a few tenths of a degree of tilt; `bearing calibrate --accel` first")
        }
        let g = AccelerometerCalibrator.standardGravity
        let off = (pose.specificForce.length - g) / g * 100
        if abs(off) > 2 {
            warnings.append(String(printf: "|f| is %.3f m/s², %+.1f%% off g: is the accelerometer calibrated, and in m/s²?", pose.specificForce.length, off))
        }
        return warnings
    }

    /// Saves `level` to `target` unless it is refused (too tilted) or `--no-save`; returns (saved, why not).
    public func save(_ level: MountingLevel, pose: StaticPose, input: LevelInput, warnings: [String], to target: String) throws -> (saved: String?, notSaved: String?) {
        if let refusal = level.refusal(force: force) { return (nil, refusal) }
        if noSave { return (nil, "--no-save") }
        let record = MountingLevelRecord(level: level, pose: pose, device: input.device, accelerometerCalibration: input.accelerometerCalibration,
                                         warnings: warnings, time: GPSTimestamp.now())
        try CalibrationSaving.writeFile(record.encoded(), to: target)
        return (target, nil)
    }
}
