import BearingCalibration

/// What becomes of a fit: saved, or not, and why, and the exit status that says so.
public enum CalibrationVerdict: Equatable {
    /// Good enough, and a calibration file can be written: the daemon needs the chip and µT.
    case save(chip: String, units: String)
    /// Not saved because it was not asked for (`--no-save`); exit status 0.
    case skip(String)
    /// Not saved although it was asked for; `status` is the exit status.
    case refuse(String, status: Int32)

    /// Why it is not saved, or nil when it is.
    public var notSaved: String? {
        switch self {
        case .save: return nil
        case .skip(let reason), .refuse(let reason, _): return reason
        }
    }

    /// The exit status when not 0.
    public var failureStatus: Int32? {
        if case .refuse(_, let status) = self { return status }
        return nil
    }
}

/// Step 3 of `calibrate`: grading. The figures are held to MotionCal's bar (`CalibrationFigures`: gaps,
/// variance, wobble, fit error), a 2-D fit is only right while the device turns level, and a file the
/// daemon can load must name the chip and be in µT.
public struct CalibrationGrading {
    /// Exit status of a fit that misses the bar or is only 2-D (saved anyway with --force).
    public static let belowTheBar: Int32 = 2
    /// Exit status when a save was asked for but cannot be made: the chip or the units are not known.
    public static let cannotSave: Int32 = 1

    public var noSave: Bool
    public var force: Bool

    public init(noSave: Bool, force: Bool) {
        self.noSave = noSave
        self.force = force
    }

    public func verdict(_ fitted: FittedCalibration, _ samples: CalibrationSamples) -> CalibrationVerdict {
        let fit = fitted.fit
        if noSave {
            return .skip("--no-save")
        }
        if fit.model == .planar && !force {
            return .refuse("only a 2-D fit was possible (the device was turned flat); tilt and roll it and try again, or --force",
                           status: Self.belowTheBar)
        }
        if !fit.figures.passes && !force {
            return .refuse("the fit misses the bar (\(fit.figures.failures.joined(separator: ", "))); collect more orientations, or --force",
                           status: Self.belowTheBar)
        }
        guard let chip = samples.chip else {
            let whence = samples.file.map { " (\($0) has no \"\(SampleFile.recordingMarker) chip=…\" line)" } ?? ""
            return .refuse("the chip is unknown\(whence); give --chip NAME", status: Self.cannotSave)
        }
        guard let units = samples.units else {
            return .refuse("the samples' units are unknown (the daemon works in µT); give --units uT if they are µT", status: Self.cannotSave)
        }
        guard units == CalibrationRecord.microtesla else {
            return .refuse("the samples are in \(units), not µT (the daemon works in µT): convert them, or give --no-save", status: Self.cannotSave)
        }
        return .save(chip: chip, units: units)
    }
}
